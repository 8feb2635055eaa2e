//! idemkey: one idempotency key per checkout attempt (work in progress).
#![deny(missing_docs)]
