//! Why a keyed request got no answer of its own, and how each reason is
//! answered: an `application/problem+json` document (RFC 9457).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::problem::{problem_body, PROBLEM_JSON};
use crate::store::StoreError;

/// Seconds a client should wait before retrying a `409` (the first request
/// with the key normally finishes within one provider round trip) or a `503`.
pub const RETRY_AFTER_SECS: u64 = 1;

/// Why a keyed request was refused, or failed, before an answer was stored.
/// Nothing was stored for it: the key stays free for its retry (or, for
/// [`Error::InProgress`], with the request that holds it).
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// No `Idempotency-Key` header: `400 missing_idempotency_key`.
    #[error("the Idempotency-Key header is required on this endpoint")]
    MissingKey,
    /// The key is not 1–255 visible ASCII (bare or sf-string), or was sent
    /// twice: `400 invalid_idempotency_key`.
    #[error("invalid Idempotency-Key: {0}")]
    InvalidKey(&'static str),
    /// A known key arrived with a different payload: `422 idempotency_key_reused`.
    #[error("this Idempotency-Key was already used with a different payload")]
    KeyReused,
    /// The first request with this key is still running (or died less than
    /// the lock timeout ago): `409 request_in_progress` with `Retry-After`.
    #[error("a request with this Idempotency-Key is still being processed; retry later")]
    InProgress,
    /// The store failed (`500 internal`) or is unreachable
    /// (`503 storage_unavailable` with `Retry-After`).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Error {
    /// HTTP status, stable short code and title.
    pub fn status_code(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            Error::MissingKey => (
                StatusCode::BAD_REQUEST,
                "missing_idempotency_key",
                "Idempotency-Key required",
            ),
            Error::InvalidKey(_) => (
                StatusCode::BAD_REQUEST,
                "invalid_idempotency_key",
                "Invalid Idempotency-Key",
            ),
            Error::KeyReused => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                "Idempotency-Key reused with a different payload",
            ),
            Error::InProgress => (
                StatusCode::CONFLICT,
                "request_in_progress",
                "Request in progress",
            ),
            Error::Store(StoreError::Unavailable(_)) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "storage_unavailable",
                "Service unavailable",
            ),
            Error::Store(StoreError::Failed(_)) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Internal server error",
            ),
        }
    }

    /// The `detail` a client sees: the store's own message stays in the log.
    fn detail(&self) -> String {
        match self {
            Error::Store(StoreError::Unavailable(_)) => {
                "the database is unavailable; retry with the same key".into()
            }
            Error::Store(StoreError::Failed(_)) => "storage error".into(),
            other => other.to_string(),
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let (status, code, title) = self.status_code();
        if let Error::Store(e) = &self {
            tracing::error!(error = %e, "idempotency store");
        }
        let body = problem_body(status, code, title, &self.detail(), &[]);
        let mut resp = (
            status,
            [(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON))],
            body,
        )
            .into_response();
        if matches!(
            status,
            StatusCode::CONFLICT | StatusCode::SERVICE_UNAVAILABLE
        ) {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        }
        resp
    }
}
