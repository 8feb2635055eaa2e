//! Idempotency itself: the three phases, payload fingerprints, recovery of
//! operations whose request died, the reaper and the cache of completed
//! answers. Storage-agnostic.

pub mod error;
pub mod injected;
pub mod input;
pub mod phases;
pub mod reaper;
pub mod recovery;
pub use idemkey_axum::{Idempotency, IdempotencyKey};

/// Payload fingerprints, idemkey-axum's: HMAC-SHA256 of the canonical JSON.
pub mod fingerprint {
    pub use idemkey_axum::implementers::canonical;
    pub use idemkey_axum::{random_secret, Fingerprinter};
}
