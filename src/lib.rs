//! idemkey: one idempotency key per checkout attempt (work in progress).
#![deny(missing_docs)]

/// The pure core: record format, fingerprint, retry policy, state machine, options (no web-sys).
pub mod core;
/// The crate's error enum and `Result` alias.
pub mod error;
