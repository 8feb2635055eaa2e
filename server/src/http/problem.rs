//! The server's one error type and its rendering as RFC 9457 problem details.
//!
//! Every error a client can see goes through [`ApiError`], so every error body is
//! `application/problem+json` with `type`, `title`, `status`, `detail` and a short
//! machine-readable `code`. The phases' own errors ([`IdemError`]) become one here.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::http::drop::DropConnection;
use crate::idem::error::IdemError;
use crate::idem::injected::{Canned, ChargeFault};
use crate::provider::ProviderError;
use crate::store::StoreError;

pub use crate::problem_doc::{problem_body, PROBLEM_JSON};

/// Everything that can go wrong while serving a request.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No `Idempotency-Key` header on a keyed endpoint.
    #[error("the Idempotency-Key header is required on this endpoint")]
    MissingKey,
    /// The key header is present but not 1–255 visible ASCII (bare or sf-string).
    #[error("invalid Idempotency-Key: {0}")]
    InvalidKey(&'static str),
    /// `X-Customer-Id` is present but unusable.
    #[error("invalid X-Customer-Id: {0}")]
    InvalidCustomer(&'static str),
    /// The body is not declared as JSON.
    #[error("the request body must be sent as application/json")]
    UnsupportedMediaType,
    /// The body is larger than the endpoint accepts.
    #[error("the request body is larger than {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The body is not JSON, or not a valid request.
    #[error("{0}")]
    InvalidBody(String),
    /// A known key arrived with a different payload.
    #[error("this Idempotency-Key was already used with a different payload")]
    KeyReused,
    /// The first request with this key is still running (or died less than
    /// `--lock-timeout` ago).
    #[error("a request with this Idempotency-Key is still being processed; retry later")]
    InProgress,
    /// Injected by the `fail-before-commit` fault: nothing was stored.
    #[error("injected fault fail-before-commit: nothing was stored, retry with the same key")]
    FaultBeforeCommit,
    /// Injected by the `error-after-commit` fault: the work *was* stored.
    #[error(
        "injected fault error-after-commit: the charge was committed but this answer was lost"
    )]
    FaultAfterCommit,
    /// Injected by the `drop-before-commit` fault: the connection is closed
    /// with no response; nothing was stored.
    #[error("injected fault drop-before-commit: connection closed without a response, nothing was stored")]
    FaultDropBeforeCommit,
    /// Injected by the `respond` fault: exactly the scheduled answer; nothing
    /// was stored.
    #[error("injected fault respond: answered {} as scheduled, nothing was stored", .0.status)]
    FaultRespond(Arc<Canned>),
    /// The HTTP layer refused the request as malformed or ambiguous.
    #[error("{0}")]
    BadRequest(&'static str),
    /// The request target is longer than the HTTP layer accepts.
    #[error("the request target is longer than 8 KiB")]
    UriTooLong,
    /// The request head has too many or too large header fields.
    #[error("{0}")]
    HeadersTooLarge(&'static str),
    /// The client took too long to send its request.
    #[error("{0}")]
    RequestTimeout(&'static str),
    /// No such route (the path as sent, cut to [`ECHO_LIMIT`]).
    #[error("no such endpoint: {0}")]
    NotFound(String),
    /// The route exists but not for this method (the `Allow` header lists
    /// the ones it takes; the method as sent, cut to [`ECHO_LIMIT`]).
    #[error("method {0} is not allowed on this endpoint")]
    MethodNotAllowed(String),
    /// The store failed (or is unreachable: 503 with `Retry-After`); the
    /// detail stays in the log.
    #[error("{}", storage_message(.0))]
    Storage(#[from] StoreError),
    /// The payment provider could not be reached; the key was released, so
    /// a retry with it is safe (the provider deduplicates).
    #[error("the payment provider is unavailable; retry with the same key")]
    Provider(#[from] ProviderError),
    /// A bug or a crashed task; the detail stays in the log.
    #[error("internal error")]
    Internal(String),
}

fn storage_message(e: &StoreError) -> &'static str {
    match e {
        StoreError::Unavailable { .. } => "the database is unavailable; retry with the same key",
        _ => "storage error",
    }
}

/// Seconds a client should wait before retrying a `409` (the first request with
/// the key normally finishes within one provider round trip) or a `503` of an
/// unreachable database or provider.
pub const RETRY_AFTER_SECS: u64 = 1;

impl ApiError {
    /// HTTP status and stable short code for this error (for
    /// `drop-before-commit`, which sends nothing, the nominal 503 of the logs).
    pub fn status_code(&self) -> (StatusCode, &'static str, &'static str) {
        use ApiError::*;
        match self {
            // The key's refusals are idemkey-axum's, as every route built on it answers them.
            MissingKey => idemkey_axum::Error::MissingKey.status_code(),
            InvalidKey(why) => idemkey_axum::Error::InvalidKey(why).status_code(),
            InvalidCustomer(_) => (
                StatusCode::BAD_REQUEST,
                "invalid_customer_id",
                "Invalid X-Customer-Id",
            ),
            UnsupportedMediaType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Unsupported media type",
            ),
            PayloadTooLarge { .. } => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "Payload too large",
            ),
            InvalidBody(_) => (
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "Invalid request body",
            ),
            KeyReused => idemkey_axum::Error::KeyReused.status_code(),
            InProgress => idemkey_axum::Error::InProgress.status_code(),
            FaultBeforeCommit => (
                StatusCode::SERVICE_UNAVAILABLE,
                "fault_before_commit",
                "Service unavailable (injected fault)",
            ),
            FaultAfterCommit => (
                StatusCode::BAD_GATEWAY,
                "fault_after_commit",
                "Bad gateway (injected fault)",
            ),
            FaultDropBeforeCommit => (
                StatusCode::SERVICE_UNAVAILABLE,
                "fault_drop_before_commit",
                "Connection dropped (injected fault)",
            ),
            FaultRespond(c) => (
                StatusCode::from_u16(c.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                "fault_respond",
                "Scheduled answer (injected fault)",
            ),
            BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request", "Bad request"),
            UriTooLong => (StatusCode::URI_TOO_LONG, "uri_too_long", "URI too long"),
            HeadersTooLarge(_) => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "headers_too_large",
                "Request header fields too large",
            ),
            RequestTimeout(_) => (
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                "Request timeout",
            ),
            NotFound(_) => (StatusCode::NOT_FOUND, "not_found", "Not found"),
            MethodNotAllowed(_) => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "Method not allowed",
            ),
            Storage(StoreError::Unavailable { .. }) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "storage_unavailable",
                "Service unavailable",
            ),
            Provider(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "provider_unavailable",
                "Service unavailable",
            ),
            Storage(_) | Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Internal server error",
            ),
        }
    }
}

/// Most characters of client input a problem's `detail` repeats: enough to
/// recognise a path or a member name, never a way to make the server send
/// back (or log) whatever a client sent.
pub const ECHO_LIMIT: usize = 64;

/// `input` cut to [`ECHO_LIMIT`] characters (with an ellipsis when cut), for
/// a problem's `detail`.
pub fn echo(input: &str) -> String {
    match input.char_indices().nth(ECHO_LIMIT) {
        None => input.to_string(),
        Some((at, _)) => format!("{}…", &input[..at]),
    }
}

impl ApiError {
    /// This error's problem+json body.
    pub fn to_problem_json(&self) -> Vec<u8> {
        let (status, code, title) = self.status_code();
        problem_body(status, code, title, &self.to_string(), &[])
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::FaultRespond(c) => return canned_response(c),
            ApiError::FaultDropBeforeCommit => return DropConnection::response(),
            _ => {}
        }
        let (status, ..) = self.status_code();
        if status.is_server_error() {
            match &self {
                ApiError::Storage(e) => tracing::error!(error = %e, "storage error"),
                ApiError::Provider(e) => tracing::error!(error = %e, "provider error"),
                ApiError::Internal(e) => tracing::error!(error = %e, "internal error"),
                _ => {}
            }
        }
        let body = self.to_problem_json();
        let mut resp = (status, [(header::CONTENT_TYPE, PROBLEM_JSON)], body).into_response();
        if matches!(self, ApiError::RequestTimeout(_)) {
            resp.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if matches!(
            self,
            ApiError::InProgress
                | ApiError::Storage(StoreError::Unavailable { .. })
                | ApiError::Provider(_)
        ) {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        }
        resp
    }
}

/// The answer of a `respond` fault, exactly as scheduled.
pub fn canned_response(c: &Canned) -> Response {
    let mut r = Response::new(Body::from(c.body.clone()));
    *r.status_mut() = StatusCode::from_u16(c.status).unwrap_or(StatusCode::IM_A_TEAPOT);
    let h = r.headers_mut();
    let value = |s: &Option<String>| s.as_deref().and_then(|s| HeaderValue::from_str(s).ok());
    if let Some(v) = value(&c.retry_after) {
        h.insert(header::RETRY_AFTER, v);
    }
    if let Some(v) = value(&c.content_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    r
}

impl From<IdemError> for ApiError {
    fn from(e: IdemError) -> ApiError {
        match e {
            IdemError::KeyReused => ApiError::KeyReused,
            IdemError::InProgress => ApiError::InProgress,
            IdemError::Injected(ChargeFault::DropBeforeCommit) => ApiError::FaultDropBeforeCommit,
            IdemError::Injected(ChargeFault::Respond(c)) => ApiError::FaultRespond(c),
            IdemError::Injected(_) => ApiError::FaultBeforeCommit,
            IdemError::Storage(e) => ApiError::Storage(e),
            IdemError::Provider(e) => ApiError::Provider(e),
            IdemError::Internal(e) => ApiError::Internal(e),
        }
    }
}

impl From<idemkey_axum::Error> for ApiError {
    fn from(e: idemkey_axum::Error) -> ApiError {
        match e {
            idemkey_axum::Error::MissingKey => ApiError::MissingKey,
            idemkey_axum::Error::InvalidKey(why) => ApiError::InvalidKey(why),
            other => IdemError::from(other).into(),
        }
    }
}

/// Result alias of the handlers.
pub type ApiResult<T> = Result<T, ApiError>;
