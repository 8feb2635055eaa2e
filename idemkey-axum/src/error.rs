//! Why a keyed request got no answer of its own, and how each reason is
//! answered: an `application/problem+json` document (RFC 9457).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::problem::{problem_body, PROBLEM_JSON};
use crate::store::StoreError;

/// Seconds a client should wait before retrying a `409` (the first request
/// with the key normally finishes within one provider round trip) or a `503`.
pub const RETRY_AFTER_SECS: u64 = 1;

/// Why a keyed request was refused, or failed, before an answer was stored
/// (nothing was stored for it: the key stays free for its retry, or, for
/// [`Error::InProgress`], with the request that holds it); or why a setting
/// was refused.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No `Idempotency-Key` header: `400 missing_idempotency_key`.
    #[error("the Idempotency-Key header is required on this endpoint")]
    MissingKey,
    /// The key is not 1–255 visible ASCII (bare or sf-string), or was sent
    /// twice: `400 invalid_idempotency_key`.
    #[error("invalid Idempotency-Key: {0}")]
    InvalidKey(&'static str),
    /// A known key arrived with a different payload, or on another route:
    /// `422 idempotency_key_reused`.
    #[error("this Idempotency-Key was already used with a different payload or on another route")]
    KeyReused,
    /// The first request with this key is still running (or died less than
    /// the lock timeout ago): `409 request_in_progress` with `Retry-After`.
    #[error("a request with this Idempotency-Key is still being processed; retry later")]
    InProgress,
    /// The store failed (`500 internal`) or is unreachable
    /// (`503 storage_unavailable` with `Retry-After`).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A setting out of range ([`Timing::new`](crate::Timing::new), a
    /// fingerprint secret, a pool, a database that cannot be opened or
    /// migrated); the message says which. An answer of `500 internal`.
    #[error("invalid setting: {0}")]
    InvalidSetting(String),
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
            Error::Store(StoreError::Unavailable { .. }) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "storage_unavailable",
                "Service unavailable",
            ),
            Error::Store(StoreError::Failed { .. }) | Error::InvalidSetting(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Internal server error",
            ),
        }
    }

    /// The `detail` a client sees: the store's own message stays in the log.
    fn detail(&self) -> String {
        match self {
            Error::Store(StoreError::Unavailable { .. }) => {
                "the database is unavailable; retry with the same key".into()
            }
            Error::Store(StoreError::Failed { .. }) => "storage error".into(),
            Error::InvalidSetting(_) => "server misconfigured".into(),
            other => other.to_string(),
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let (status, code, title) = self.status_code();
        if matches!(self, Error::Store(_) | Error::InvalidSetting(_)) {
            tracing::error!(error = %self, "idempotency store");
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
