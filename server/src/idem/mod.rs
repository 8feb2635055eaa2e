//! Idempotency itself: the three phases, payload fingerprints, recovery of
//! operations whose request died, the reaper and the cache of completed
//! answers. Storage-agnostic.

pub mod error;
pub mod injected;
pub mod input;
pub mod phases;
pub mod reaper;
pub mod recovery;
pub use idemkey_axum::{fingerprint, in_flight, replay_cache};
