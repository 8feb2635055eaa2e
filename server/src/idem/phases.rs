//! The phases of a keyed charge, on idemkey-axum's: the look-up, phase 1
//! (reserve), phase 2 (the provider, outside any transaction, with the same
//! key and the operation id) and phase 3 (the charge and the response,
//! committed together). What the server adds is its own: the scheduled
//! faults, taken only by a request about to do work (after the look-up, so
//! replays, 409s and 422s take none, and before any transaction, so a
//! before-commit fault stores nothing), and the charge phase 3 writes.

use axum::http::StatusCode;
use idemkey_axum::{Idempotency, IdempotencyKey, Reservation};
use serde_json::json;

use crate::idem::error::IdemError;
use crate::idem::injected::{ChargeFault, ChargeFaults};
use crate::idem::input::ChargeInput;
use crate::ids::{new_id, now_ms};
use crate::problem_doc::{problem_body, PROBLEM_JSON};
use crate::provider::{Payment, PaymentRequest, Provider};
use crate::store::model::{Charge, Outcome, StoredResponse};

/// The name of the charge route, which its keys belong to.
pub const ROUTE: &str = "POST /api/charges";

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

impl From<idemkey_axum::Answer> for Answer {
    fn from(a: idemkey_axum::Answer) -> Answer {
        Answer {
            response: a.response,
            replayed: a.replayed,
            from_cache: a.from_cache,
            fault: None,
        }
    }
}

/// What a keyed request needs besides itself: the route's idempotency, the
/// provider and the fault queues.
pub struct Deps<'a> {
    /// The charge route's idempotency (key table, running keys, cache).
    pub idem: &'a Idempotency<Outcome>,
    /// The payment provider stand-in.
    pub provider: &'a Provider,
    /// Scheduled faults.
    pub faults: &'a dyn ChargeFaults,
}

/// Runs the look-up and phases 1 to 3 for one keyed request.
pub async fn phases(
    deps: Deps<'_>,
    customer: String,
    idem_key: String,
    input: ChargeInput,
) -> Result<Answer, IdemError> {
    let req = deps
        .idem
        .request(&customer, &IdempotencyKey(idem_key.clone()), &input.raw);
    let keys = deps.idem.keys();
    if let Some(replay) = keys.look(&req).await? {
        return Ok(replay.into());
    }
    // This request is about to do work: it takes a fault now, and one that
    // acts before commit answers with nothing stored.
    let fault = deps
        .faults
        .take(&customer, Some(&idem_key), &req.fingerprint);
    if let Some(f) = fault.clone().filter(ChargeFault::before_commit) {
        return Err(IdemError::Injected(f));
    }

    // Phase 1: reserve.
    let op = match keys.reserve(req).await? {
        Reservation::Proceed(op) => op,
        Reservation::Answered(replay) => return Ok(replay.into()),
    };

    // Phase 2: the provider, outside any transaction, deduplicating on the key.
    let payment = deps
        .provider
        .pay(PaymentRequest {
            customer: customer.clone(),
            key: idem_key.clone(),
            reservation: op.operation_id().to_string(),
            amount: input.amount,
            currency: input.currency.clone(),
            card: input.card.clone(),
        })
        .await;
    let payment = match payment {
        Ok(p) => p,
        Err(e) => {
            op.release().await;
            return Err(e.into());
        }
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
    let write = outcome(
        &customer,
        Some(&idem_key),
        Some(op.operation_id()),
        input.amount,
        &input.currency,
        payment,
    );
    let answer = op.commit(write).await?;
    Ok(Answer {
        fault,
        ..answer.into()
    })
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
    StoredResponse::new(status.as_u16(), PROBLEM_JSON, body)
}
