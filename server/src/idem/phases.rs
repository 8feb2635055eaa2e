//! The three phases of a keyed charge, shared by requests and recovery.
//!
//! A read-only look-up comes first: replays, 409s and 422s are answered
//! from it and never wait for a writer. Only a request that will do work takes
//! a scheduled fault, so faults act around the phases, never inside a store
//! transaction. Phase 1 reserves the key atomically (the look-up may have
//! raced another request; the reservation has the last word). Phase 2 calls the
//! provider outside any transaction, with the same key. Phase 3 commits the
//! charge and the response together.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::json;

use crate::idem::error::IdemError;
use crate::idem::fingerprint::Fingerprinter;
use crate::idem::in_flight::InFlight;
use crate::idem::injected::{ChargeFault, ChargeFaults};
use crate::idem::input::ChargeInput;
use crate::idem::replay_cache::{Cached, ReplayCache};
use crate::ids::{new_id, now_ms};
use crate::problem_doc::{problem_body, PROBLEM_JSON};
use crate::provider::{Payment, PaymentRequest, Provider};
use crate::store::model::{
    Charge, Completed, KeyRequest, Lock, Lookup, Outcome, Reserved, StoredResponse,
};
use crate::store::Store;

/// The final answer of one request, before after-commit faults apply.
pub struct Answer {
    /// The stored (or just committed) response.
    pub response: StoredResponse,
    /// True when it is a replay.
    pub replayed: bool,
    /// True when this instance's cache of completed answers gave it.
    pub from_cache: bool,
    /// The fault this request took, if any (one that acts after commit).
    pub fault: Option<ChargeFault>,
}

impl Answer {
    fn replay(response: StoredResponse) -> Answer {
        Answer {
            response,
            replayed: true,
            from_cache: false,
            fault: None,
        }
    }
}

/// What a keyed request needs besides itself: the store, the provider, the
/// fault queues, this instance's running keys, its cache and its
/// fingerprint secret.
pub struct Deps<'a> {
    /// The idempotency store.
    pub store: &'a dyn Store,
    /// The payment provider stand-in.
    pub provider: &'a Provider,
    /// Scheduled faults.
    pub faults: &'a dyn ChargeFaults,
    /// Keys this instance's requests are working on.
    pub in_flight: &'a InFlight,
    /// Completed answers recently read from the store.
    pub cache: &'a ReplayCache,
    /// Payload fingerprints under the server's secret.
    pub fingerprints: &'a Fingerprinter,
}

/// Runs the look-up and phases 1 to 3 for one keyed request.
pub async fn phases(
    deps: Deps<'_>,
    customer: String,
    idem_key: String,
    input: ChargeInput,
) -> Result<Answer, IdemError> {
    let req = KeyRequest {
        customer: customer.clone(),
        key: idem_key.clone(),
        fingerprint: deps.fingerprints.of(&input.raw),
    };
    let Deps {
        store,
        provider,
        faults,
        in_flight,
        cache,
        fingerprints: _,
    } = deps;
    match cache.get(&req) {
        Some(Cached::Replay(r)) => {
            return Ok(Answer {
                from_cache: true,
                ..Answer::replay(r)
            })
        }
        Some(Cached::KeyReused) => return Err(IdemError::KeyReused),
        None => {}
    }
    let asked = Instant::now();
    match store.lookup(&req).await? {
        Lookup::Replay {
            response,
            expires_in_ms,
        } => {
            let left = Duration::from_millis(u64::try_from(expires_in_ms).unwrap_or(0));
            cache.put(&req, &response, asked, left);
            return Ok(Answer::replay(response));
        }
        Lookup::KeyReused => return Err(IdemError::KeyReused),
        Lookup::InProgress => return Err(IdemError::InProgress),
        Lookup::Free => {}
    }
    // This request is about to do work: it takes a fault now, and one that
    // acts before commit answers with nothing stored.
    let fault = faults.take(&customer, Some(&idem_key), &req.fingerprint);
    if let Some(f) = fault.clone().filter(ChargeFault::before_commit) {
        return Err(IdemError::Injected(f));
    }

    // Phase 1: reserve. From here to the end this instance's recovery leaves
    // the key to this request.
    let _held = in_flight.hold(&customer, &idem_key);
    let lock = match store.reserve(&req).await? {
        Reserved::Proceed(lock) => lock,
        Reserved::Replay(r) => return Ok(Answer::replay(r)),
        Reserved::KeyReused => return Err(IdemError::KeyReused),
        Reserved::InProgress => return Err(IdemError::InProgress),
    };
    if lock.recovered {
        tracing::warn!(
            customer,
            key = idem_key,
            "taking over a key whose request died between phases"
        );
    }

    // Phase 2: the provider, outside any transaction, deduplicating on the key.
    let payment = provider
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
        Err(e) => return Err(release(store, &customer, &idem_key, &lock, e.into()).await),
    };
    if fault == Some(ChargeFault::CrashAfterProvider) {
        tracing::error!(
            customer,
            key = idem_key,
            "fault crash-after-provider: aborting the process"
        );
        std::process::abort();
    }

    // Phase 3: charge + stored response + done, in one transaction.
    let completed = complete(
        store,
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
        Completed::LockLost => return Err(IdemError::InProgress),
    };
    Ok(Answer {
        response,
        replayed,
        from_cache: false,
        fault,
    })
}

/// Phase 3, shared by a request and the server-side recovery, so a recovered
/// operation stores what its request would have: the provider's answer
/// becomes a charge (answered 201) or a stored 402, committed only if `lock`
/// still owns the key. On a store failure the key is handed back at once,
/// not after `--lock-timeout`.
pub async fn complete(
    store: &dyn Store,
    customer: &str,
    idem_key: &str,
    lock: &Lock,
    amount: u64,
    currency: &str,
    payment: Payment,
) -> Result<Completed, IdemError> {
    let outcome = outcome(
        customer,
        Some(idem_key),
        Some(&lock.reservation),
        amount,
        currency,
        payment,
    );
    match store.complete(customer, idem_key, lock, outcome).await {
        Ok(c) => Ok(c),
        Err(e) => Err(release(store, customer, idem_key, lock, e.into()).await),
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
    store: &dyn Store,
    customer: &str,
    idem_key: &str,
    lock: &Lock,
    e: IdemError,
) -> IdemError {
    if let Err(re) = store.release(customer, idem_key, lock).await {
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
