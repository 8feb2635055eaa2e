//! The charge endpoints: `POST /api/charges` (keyed), the naive endpoint, the
//! ledger and the provider counters.
//!
//! The phases run in a spawned task, so a client that hangs up mid-request
//! does not strand its key in progress: the work still commits and the
//! client's retry gets the replay.

use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::http::body::{read_json, validate_charge};
use crate::http::drop::DropConnection;
use crate::http::headers as key;
use crate::http::problem::{ApiError, ApiResult};
use crate::http::state::AppState;
use crate::idem::error::IdemError;
use crate::idem::injected::{ChargeFault, ChargeFaults};
use crate::idem::phases::{outcome, phases, Answer, Deps};
use crate::ids::new_id;
use crate::provider::PaymentRequest;
use crate::store::model::{Created, Outcome, StoredResponse};

/// Header marking a replayed answer (the client's own name for it).
pub use idemkey_axum::REPLAYED;

/// `POST /api/charges`.
pub async fn create(State(st): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let customer = match key::customer(&headers) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let idem_key = match key::idempotency_key(&headers) {
        Ok(k) => k,
        Err(e) => {
            tracing::info!(customer, status = 400, "charge refused: {e}");
            return e.into_response();
        }
    };
    let input = match read_json(&headers, body).await.and_then(validate_charge) {
        Ok(i) => i,
        Err(e) => {
            tracing::info!(
                customer,
                key = idem_key,
                status = e.status_code().0.as_u16(),
                "charge refused: {e}"
            );
            return e.into_response();
        }
    };
    let (c, k) = (customer.clone(), idem_key.clone());
    let task = tokio::spawn(async move {
        let deps = Deps {
            idem: &st.idem,
            provider: &st.provider,
            faults: &*st.faults,
        };
        phases(deps, c, k, input).await
    });
    let result = task
        .await
        .unwrap_or_else(|e| Err(IdemError::Internal(format!("charge task: {e}"))))
        .map_err(ApiError::from);
    match result {
        Ok(answer) => {
            tracing::info!(customer, key = idem_key, status = answer.response.status, replayed = answer.replayed,
                cached = answer.from_cache, fault = ?answer.fault, "charge answered");
            finish(answer).await
        }
        Err(e) => {
            tracing::info!(
                customer,
                key = idem_key,
                status = e.status_code().0.as_u16(),
                replayed = false,
                "charge: {e}"
            );
            e.into_response()
        }
    }
}

/// Applies after-commit faults and renders the answer.
async fn finish(answer: Answer) -> Response {
    match answer.fault {
        Some(ChargeFault::DropAfterCommit) => return DropConnection::response(),
        Some(ChargeFault::ErrorAfterCommit) => return ApiError::FaultAfterCommit.into_response(),
        Some(ChargeFault::DelayAfterCommit(ms)) => {
            tokio::time::sleep(Duration::from_millis(ms)).await
        }
        _ => {}
    }
    idemkey_axum::Answer {
        response: answer.response,
        replayed: answer.replayed,
        from_cache: answer.from_cache,
    }
    .into_response()
}

/// `POST /api/naive/charges` (only with `--faults`): what a server without
/// idempotency does. No key; every request is a new charge.
pub async fn create_naive(State(st): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let result = async {
        let customer = key::customer(&headers)?;
        let input = validate_charge(read_json(&headers, body).await?)?;
        let fault = ChargeFaults::take(
            &*st.faults,
            &customer,
            None,
            &st.fingerprints.of(&input.raw),
        );
        if let Some(f) = fault.clone().filter(ChargeFault::before_commit) {
            return Err(ApiError::from(IdemError::Injected(f)));
        }
        let task = tokio::spawn(async move {
            let payment = st
                .provider
                .pay(PaymentRequest {
                    customer: customer.clone(),
                    key: new_id("naive"),
                    reservation: new_id("op"),
                    amount: input.amount,
                    currency: input.currency.clone(),
                    card: input.card.clone(),
                })
                .await?;
            match outcome(
                &customer,
                None,
                None,
                input.amount,
                &input.currency,
                payment,
            ) {
                Outcome::Answer(declined) => Ok(declined),
                Outcome::Charge(charge) => {
                    let response = StoredResponse::created(&charge);
                    st.store.insert_charge(&charge).await?;
                    Ok(response)
                }
            }
        });
        let response = task
            .await
            .unwrap_or_else(|e| Err(ApiError::Internal(format!("naive task: {e}"))))?;
        Ok(Answer {
            response,
            replayed: false,
            from_cache: false,
            fault,
        })
    }
    .await;
    match result {
        Ok(answer) => finish(answer).await,
        Err(e) => e.into_response(),
    }
}

/// `GET /api/charges`: `{ customer, count, charges }`, oldest first.
pub async fn list(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let charges = st.store.charges(&customer).await?;
    Ok(Json(
        json!({ "customer": customer, "count": charges.len(), "charges": charges }),
    ))
}

/// `DELETE /api/charges` (only with `--faults`): empties the customer's ledger,
/// keys and provider records.
pub async fn reset(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let (charges, keys) = st.store.delete_customer(&customer).await?;
    st.provider.delete_customer(customer.clone()).await?;
    tracing::info!(customer, charges, keys, "ledger emptied");
    Ok(Json(
        json!({ "customer": customer, "deleted_charges": charges, "deleted_keys": keys }),
    ))
}

/// `GET /api/provider` (only with `--faults`): the provider stand-in's counters
/// for the customer: `{ customer, calls, payments }`.
pub async fn provider_stats(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let stats = st.provider.stats(customer.clone()).await?;
    Ok(Json(
        json!({ "customer": customer, "calls": stats.calls, "payments": stats.payments }),
    ))
}
