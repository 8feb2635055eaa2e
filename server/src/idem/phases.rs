//! The three phases of a keyed charge, shared by requests and recovery.
//!
//! Phase 1 reserves the key (or answers replay / 409 / 422). Phase 2 calls the
//! provider outside any transaction, with the same key. Phase 3 commits the
//! charge and the response together.

use serde_json::json;

use axum::http::StatusCode;

use crate::faults::{Fault, FaultMode};
use crate::http::body::ChargeInput;
use crate::http::problem::{problem_body, ApiError, ApiResult, PROBLEM_JSON};
use crate::http::routes::AppState;
use crate::idem::fingerprint::fingerprint;
use crate::ids::{new_id, now_ms};
use crate::provider::{Payment, PaymentRequest};
use crate::store::sqlite::connection::Store;
use crate::store::sqlite::idempotency_keys::{
    self as keys, Completed, Lock, Outcome, ReserveArgs, Reserved, StoredResponse,
};
use crate::store::sqlite::ledger::Charge;

/// The final answer of one request, before after-commit faults apply.
pub struct Answer {
    /// The stored (or just committed) response.
    pub response: StoredResponse,
    /// True when it is a replay.
    pub replayed: bool,
    /// The fault this request took, if any.
    pub fault: Option<Fault>,
}

/// Runs phases 1 to 3 for one keyed request.
pub async fn phases(
    st: AppState,
    customer: String,
    idem_key: String,
    input: ChargeInput,
) -> ApiResult<Answer> {
    // Phase 1: reserve.
    let args = ReserveArgs {
        customer: customer.clone(),
        key: idem_key.clone(),
        fingerprint: fingerprint(&input.raw),
        now: now_ms(),
        ttl_ms: st.cfg.key_ttl.as_millis() as i64,
        lock_ms: st.cfg.lock_timeout.as_millis() as i64,
    };
    let faults = st.faults.clone();
    let fault_customer = customer.clone();
    let reserved = st
        .store
        .write(move |conn| {
            keys::reserve(conn, &args, || {
                faults.take(&fault_customer, Some(&args.key), &args.fingerprint)
            })
        })
        .await?;
    let lock = match reserved {
        Reserved::Replay(response) => {
            return Ok(Answer {
                response,
                replayed: true,
                fault: None,
            })
        }
        Reserved::Proceed(lock) => lock,
    };
    if lock.recovered {
        tracing::warn!(
            customer,
            key = idem_key,
            "taking over a key whose request died between phases"
        );
    }

    // Phase 2: the provider, outside any transaction, deduplicating on the key.
    let payment = st
        .provider
        .pay(PaymentRequest {
            customer: customer.clone(),
            key: idem_key.clone(),
            reservation: lock.reservation.clone(),
            amount: input.amount,
            currency: input.currency.clone(),
            card: input.card.clone(),
        })
        .await;
    let payment = match payment {
        Ok(p) => p,
        Err(e) => return Err(release(&st.store, &customer, &idem_key, &lock.owner, e).await),
    };
    if lock
        .fault
        .as_ref()
        .is_some_and(|f| f.mode == FaultMode::CrashAfterProvider)
    {
        tracing::error!(
            customer,
            key = idem_key,
            "fault crash-after-provider: aborting the process"
        );
        std::process::abort();
    }

    // Phase 3: charge + stored response + done, in one transaction.
    let completed = complete(
        &st.store,
        &customer,
        &idem_key,
        &lock,
        input.amount,
        &input.currency,
        payment,
    )
    .await?;
    let (response, replayed) = match completed {
        Completed::Stored(response) => (response, false),
        Completed::AlreadyDone(response) => (response, true),
    };
    Ok(Answer {
        response,
        replayed,
        fault: lock.fault,
    })
}

/// Phase 3, shared by a request and the server-side recovery, so a recovered
/// operation stores what its request would have: the provider's answer
/// becomes a charge (answered 201) or a stored 402, committed only if `lock`
/// still owns the key. On any failure but a lost lock the key is handed back
/// at once, not after `--lock-timeout`.
pub async fn complete(
    store: &Store,
    customer: &str,
    idem_key: &str,
    lock: &Lock,
    amount: u64,
    currency: &str,
    payment: Payment,
) -> ApiResult<Completed> {
    let outcome = outcome(
        customer,
        Some(idem_key),
        Some(&lock.reservation),
        amount,
        currency,
        payment,
    );
    let (c, k, l) = (customer.to_string(), idem_key.to_string(), lock.clone());
    match store
        .write(move |conn| keys::complete(conn, &c, &k, &l, outcome))
        .await
    {
        Err(e @ ApiError::InProgress) => Err(e),
        Err(e) => Err(release(store, customer, idem_key, &lock.owner, e).await),
        completed => completed,
    }
}

/// What the provider's answer means: an approved payment is a charge, a
/// declined one a stored 402. `idem_key` and `reservation` are `None` on the
/// naive endpoint.
pub fn outcome(
    customer: &str,
    idem_key: Option<&str>,
    reservation: Option<&str>,
    amount: u64,
    currency: &str,
    payment: Payment,
) -> Outcome {
    if !payment.approved {
        return Outcome::Answer(declined(idem_key, &payment.reference));
    }
    Outcome::Charge(Charge {
        id: new_id("ch"),
        object: "charge",
        key: idem_key.map(str::to_string),
        customer: customer.to_string(),
        amount,
        currency: currency.to_string(),
        status: "succeeded",
        provider_ref: payment.reference,
        created_at: now_ms(),
        reservation: reservation.map(str::to_string),
    })
}

/// Releases the lock after a failure (best effort) and passes the error on.
async fn release(
    store: &Store,
    customer: &str,
    idem_key: &str,
    owner: &str,
    e: ApiError,
) -> ApiError {
    let (c, k, o) = (
        customer.to_string(),
        idem_key.to_string(),
        owner.to_string(),
    );
    if let Err(re) = store
        .write(move |conn| keys::release(conn, &c, &k, &o))
        .await
    {
        tracing::error!(error = %re, "could not release a key lock; it frees itself after --lock-timeout");
    }
    e
}

/// The stored body of a declined payment.
fn declined(idem_key: Option<&str>, reference: &str) -> StoredResponse {
    let status = StatusCode::PAYMENT_REQUIRED;
    let body = problem_body(
        status,
        "card_declined",
        "Card declined",
        "the card was declined by the payment provider; nothing was charged",
        &[("key", json!(idem_key)), ("provider_ref", json!(reference))],
    );
    StoredResponse {
        status: status.as_u16(),
        content_type: PROBLEM_JSON.into(),
        body,
    }
}
