//! Idempotency itself: the three phases, payload fingerprints, recovery of
//! operations whose request died, the reaper and the cache of completed
//! answers. Storage-agnostic.

pub mod error;
pub mod fingerprint;
pub mod in_flight;
pub mod injected;
pub mod input;
pub mod phases;
pub mod reaper;
pub mod recovery;
pub mod replay_cache;
