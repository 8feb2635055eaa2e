//! `GET /api/receipts`: the receipts the mailer stand-in sent a customer,
//! and where each of the customer's outbox events stands.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde_json::{json, Value};

use crate::http::headers as key;
use crate::http::problem::ApiResult;
use crate::http::state::AppState;

/// `{ customer, count, receipts: [{ id, event_id, charge_id, created_at, … }],
/// events: [{ id, type, charge_id, state, deliveries, … }] }`, oldest first.
pub async fn list(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let view = st.outbox.receipts(&customer).await?;
    Ok(Json(json!({
        "customer": customer,
        "count": view.receipts.len(),
        "receipts": view.receipts,
        "events": view.events,
    })))
}
