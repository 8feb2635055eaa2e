//! What can stop a keyed charge, in the domain's terms. The HTTP layer turns
//! each into a status code and a problem document.

use crate::idem::injected::ChargeFault;
use crate::provider::ProviderError;
use crate::store::StoreError;

/// Why the phases gave no answer to store or replay.
#[derive(Debug, thiserror::Error)]
pub enum IdemError {
    /// A known key arrived with a different payload.
    #[error("this Idempotency-Key was already used with a different payload")]
    KeyReused,
    /// The first request with this key is still running (or died less than
    /// `--lock-timeout` ago).
    #[error("a request with this Idempotency-Key is still being processed; retry later")]
    InProgress,
    /// A scheduled fault that acts before anything is stored took the
    /// request: nothing was stored.
    #[error("an injected fault stopped the request before anything was stored")]
    Injected(ChargeFault),
    /// The store failed or is unreachable.
    #[error(transparent)]
    Storage(#[from] StoreError),
    /// The payment provider could not be reached; the key was released.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// A crashed task.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<idemkey_axum::Error> for IdemError {
    fn from(e: idemkey_axum::Error) -> IdemError {
        match e {
            idemkey_axum::Error::KeyReused => IdemError::KeyReused,
            idemkey_axum::Error::InProgress => IdemError::InProgress,
            idemkey_axum::Error::Store(e) => IdemError::Storage(e),
            // The handler parses the key before the phases run.
            e => IdemError::Internal(e.to_string()),
        }
    }
}
