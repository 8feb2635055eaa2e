//! `idemkey-server provider`: the stand-in as its own HTTP service, as a real
//! payment API would be. It deduplicates on the `Idempotency-Key` header
//! (qualified by `X-Customer-Id` and the body's `operation`) in its own
//! SQLite file, so every instance that calls it shares one record of payments.
//!
//! - `POST /v1/payments` `{ operation, amount, currency, card? }`: pays once,
//!   answers `{ approved, reference }` (the first answer on every repeat);
//!   values no instance sends are a 400 naming the member;
//! - `GET /v1/payments?operation=…`: the recorded payment or 404, never a new one;
//! - `GET /v1/stats`: `{ calls, payments }`; `DELETE /v1/payments`: forgets
//!   the customer's payments;
//! - `GET /healthz`.

use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use crate::http::body::MAX_AMOUNT;
use crate::http::headers;
use crate::provider::local::Local;
use crate::provider::{MaskedCard, PaymentRequest};

/// `POST /v1/payments` body. Its `Debug` masks the card.
#[derive(Deserialize)]
pub struct PayBody {
    /// The operation id (new after a key's TTL, kept across takeovers).
    pub operation: String,
    /// Minor units.
    pub amount: u64,
    /// Currency code.
    pub currency: String,
    /// Card number, digits only.
    pub card: Option<String>,
}

impl std::fmt::Debug for PayBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PayBody")
            .field("operation", &self.operation)
            .field("amount", &self.amount)
            .field("currency", &self.currency)
            .field("card", &self.card.as_deref().map(MaskedCard))
            .finish()
    }
}

impl PayBody {
    /// Refuses values no instance sends, naming the member: an amount outside
    /// the charge range (one beyond `i64` would not read back from the
    /// table), a currency that is not three lowercase letters, an operation
    /// that is not 1-255 visible ASCII, a card that is not 12-19 digits.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_AMOUNT).contains(&self.amount) {
            return Err(format!("`amount` must be 1 to {MAX_AMOUNT}"));
        }
        if self.currency.len() != 3 || !self.currency.bytes().all(|c| c.is_ascii_lowercase()) {
            return Err("`currency` must be three lowercase letters".into());
        }
        let op = self.operation.as_bytes();
        if op.is_empty() || op.len() > 255 || !op.iter().all(|b| (0x21..=0x7e).contains(b)) {
            return Err("`operation` must be 1-255 visible ASCII characters".into());
        }
        if let Some(card) = &self.card {
            if !(12..=19).contains(&card.len()) || !card.bytes().all(|b| b.is_ascii_digit()) {
                return Err("`card` must be 12-19 digits".into());
            }
        }
        Ok(())
    }
}

/// `GET /v1/payments` query.
#[derive(Debug, Deserialize)]
pub struct FindQuery {
    /// The operation id.
    pub operation: String,
}

fn refuse(status: StatusCode, detail: impl std::fmt::Display) -> Response {
    (status, Json(json!({ "error": detail.to_string() }))).into_response()
}

/// Customer and key of a request, or what is wrong with them (a 400).
fn scope(h: &HeaderMap) -> Result<(String, String), String> {
    let customer = headers::customer(h).map_err(|e| e.to_string())?;
    let key = headers::idempotency_key(h).map_err(|e| e.to_string())?;
    Ok((customer, key))
}

async fn pay(
    State(p): State<Local>,
    h: HeaderMap,
    body: Result<Json<PayBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let (customer, key) = match scope(&h) {
        Ok(s) => s,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e),
    };
    let Json(b) = match body {
        Ok(b) => b,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e.body_text()),
    };
    if let Err(e) = b.validate() {
        return refuse(StatusCode::BAD_REQUEST, e);
    }
    let req = PaymentRequest {
        customer,
        key,
        reservation: b.operation,
        amount: b.amount,
        currency: b.currency,
        card: b.card,
    };
    match p.pay(req).await {
        Ok(pay) => {
            Json(json!({ "approved": pay.approved, "reference": pay.reference })).into_response()
        }
        Err(e) => refuse(StatusCode::SERVICE_UNAVAILABLE, e),
    }
}

async fn find(
    State(p): State<Local>,
    h: HeaderMap,
    q: Result<Query<FindQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let (customer, key) = match scope(&h) {
        Ok(s) => s,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e),
    };
    let Query(q) = match q {
        Ok(q) => q,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e.body_text()),
    };
    match p.find(customer, key, q.operation).await {
        Ok(Some(r)) => Json(json!({
            "approved": r.payment.approved, "reference": r.payment.reference,
            "amount": r.amount, "currency": r.currency,
        }))
        .into_response(),
        Ok(None) => refuse(
            StatusCode::NOT_FOUND,
            "no payment under this key and operation",
        ),
        Err(e) => refuse(StatusCode::SERVICE_UNAVAILABLE, e),
    }
}

async fn stats(State(p): State<Local>, h: HeaderMap) -> Response {
    let customer = match headers::customer(&h) {
        Ok(c) => c,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e),
    };
    match p.stats(customer).await {
        Ok(s) => Json(json!({ "calls": s.calls, "payments": s.payments })).into_response(),
        Err(e) => refuse(StatusCode::SERVICE_UNAVAILABLE, e),
    }
}

async fn forget(State(p): State<Local>, h: HeaderMap) -> Response {
    let customer = match headers::customer(&h) {
        Ok(c) => c,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e),
    };
    match p.delete_customer(customer).await {
        Ok(()) => Json(json!({ "deleted": true })).into_response(),
        Err(e) => refuse(StatusCode::SERVICE_UNAVAILABLE, e),
    }
}

/// The service's router.
pub fn router(p: Local) -> Router {
    Router::new()
        .route(
            "/healthz",
            get(|| async { Json(json!({ "status": "ok" })) }),
        )
        .route("/v1/payments", get(find).post(pay).delete(forget))
        .route("/v1/stats", get(stats))
        .with_state(p)
}

/// A stand-in on `db` answering after `latency`.
pub fn open(db: &std::path::Path, latency: Duration) -> Result<Local, String> {
    Local::open(db, latency)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_masks_the_card() {
        let body: PayBody = serde_json::from_str(
            r#"{"operation":"op_1","amount":100,"currency":"usd","card":"5555555555554444"}"#,
        )
        .unwrap();
        let shown = format!("{body:?}");
        assert!(
            shown.contains("****4444") && !shown.contains("55555"),
            "{shown}"
        );
    }
}
