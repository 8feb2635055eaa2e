//! What `submit()` must do, given the stored record and the payload.

use crate::core::record::Record;
use crate::core::state::State;

/// What `submit()` does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitPlan {
    /// Send the request; with `new_key` the record is replaced by a fresh one first.
    Send {
        /// Start a new attempt with a new key before sending.
        new_key: bool,
    },
    /// Resolve with the stored response (`fromCache: true`), send nothing.
    Cached,
    /// Reject with `payload-conflict`: the key is pending or succeeded for another payload.
    Conflict,
}

/// Decides what a submit of the payload with fingerprint `fp` does at `now_ms`.
///
/// A key whose outcome is unknown or successful is never rotated silently; a failed or
/// expired one is, because the server did nothing with it (or has forgotten it).
pub fn plan_submit(rec: &Record, fp: &str, now_ms: f64) -> SubmitPlan {
    if rec.is_expired(now_ms) {
        return SubmitPlan::Send { new_key: true };
    }
    let same = rec.fingerprint.as_deref() == Some(fp);
    match rec.state {
        State::Fresh => SubmitPlan::Send { new_key: false },
        // A pending record without a fingerprint has bound nothing yet, so it may bind this one.
        State::Pending if same || rec.fingerprint.is_none() => SubmitPlan::Send { new_key: false },
        State::Pending => SubmitPlan::Conflict,
        State::Succeeded if same => SubmitPlan::Cached,
        State::Succeeded => SubmitPlan::Conflict,
        State::Failed => SubmitPlan::Send { new_key: true },
    }
}

/// [`plan_submit`] for a `submit()` after waiting for the scope's lock; `seen_failed`: the
/// page showed `rec`'s failure when `submit()` was called.
///
/// While this submit waited, another tab may have sent this very payload and stored a
/// *failed* answer (the server said no). That answer is this submit's answer too:
/// [`SubmitPlan::Cached`] instead of a new key and a second request. A failure the page
/// showed when the customer pressed Pay is the answer they are trying again after, and a
/// failed record for another payload, or with no response, is planned as usual. No clock
/// decides it: one set back or rounded cannot turn an old failure into a new one.
pub fn plan_submit_since(rec: &Record, fp: &str, now_ms: f64, seen_failed: bool) -> SubmitPlan {
    if rec.state == State::Failed
        && rec.fingerprint.as_deref() == Some(fp)
        && !seen_failed
        && rec.response.is_some()
    {
        return SubmitPlan::Cached;
    }
    plan_submit(rec, fp, now_ms)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
