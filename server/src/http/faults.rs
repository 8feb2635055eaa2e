//! The fault API (only with `--faults`): `POST /api/faults` schedules,
//! `GET /api/faults` lists, per customer.

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde_json::Value;

use crate::faults::request as fault_request;
use crate::http::body::read_json;
use crate::http::headers as key;
use crate::http::problem::{ApiError, ApiResult};
use crate::http::state::AppState;

/// `POST /api/faults {mode, count?=1, delay_ms?=1000, status?, retry_after?,
/// body?, content_type?}`: appends to the customer's queue (`none` clears
/// it); answers like `GET /api/faults`.
pub async fn schedule(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let req =
        fault_request::parse(read_json(&headers, body).await?).map_err(ApiError::InvalidBody)?;
    tracing::info!(customer, ?req, "faults scheduled");
    let state = st
        .faults
        .schedule(&customer, req)
        .map_err(ApiError::InvalidBody)?;
    Ok(Json(state))
}

/// `GET /api/faults`: the customer's queue and the units its requests took.
pub async fn list(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    Ok(Json(st.faults.list(&customer)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::problem::canned_response;
    use axum::http::header;
    use serde_json::json;

    #[test]
    fn a_canned_answer_is_sent_verbatim() {
        let r = fault_request::parse(json!({"mode": "respond", "status": 429,
            "retry_after": "Wed, 21 Oct 2015 07:28:00 GMT", "body": "slow down", "content_type": "text/plain"}))
        .unwrap()
        .unwrap();
        let resp = canned_response(&r.respond.unwrap());
        assert_eq!(resp.status(), 429);
        assert_eq!(
            resp.headers()[header::RETRY_AFTER],
            "Wed, 21 Oct 2015 07:28:00 GMT"
        );
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "text/plain");
        let bare = fault_request::parse(json!({"mode": "respond", "status": 204}))
            .unwrap()
            .unwrap();
        let resp = canned_response(&bare.respond.unwrap());
        assert_eq!(resp.status(), 204);
        assert!(resp.headers().is_empty());
    }
}
