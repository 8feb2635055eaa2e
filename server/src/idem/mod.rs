//! Idempotency itself: the three phases, payload fingerprints, recovery of
//! operations whose request died, and the reaper. Storage-agnostic.

pub mod fingerprint;
pub mod in_flight;
pub mod phases;
pub mod reaper;
pub mod recovery;
