//! Faults of a charge: which request goes wrong, and how (only with
//! `--faults`; tests and the demo schedule them).
//!
//! The phases ask [`ChargeFaults::take`] once, when a request is about to do
//! work (replays, 409s and 422s take none). The server's fault registry
//! answers from the customer's scheduled faults; production passes
//! [`NoChargeFaults`].

use std::sync::Arc;

use serde::Serialize;

/// What goes wrong with one charge request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChargeFault {
    /// Answer 503 before anything is stored (and before the provider is called).
    FailBeforeCommit,
    /// Close the connection without any response before anything is stored.
    DropBeforeCommit,
    /// Answer exactly this before anything is stored.
    Respond(Arc<Canned>),
    /// Abort the whole process after the provider answered and before phase
    /// 3, leaving the key in progress (a request killed between phases).
    CrashAfterProvider,
    /// Commit, then close the connection without any response.
    DropAfterCommit,
    /// Commit, then answer 502.
    ErrorAfterCommit,
    /// Commit, then wait this many milliseconds before answering.
    DelayAfterCommit(u64),
}

impl ChargeFault {
    /// True for the faults that answer before anything is stored.
    pub fn before_commit(&self) -> bool {
        matches!(
            self,
            ChargeFault::FailBeforeCommit | ChargeFault::DropBeforeCommit | ChargeFault::Respond(_)
        )
    }
}

/// The exact answer of a `respond` fault. Validated when scheduled, so
/// rendering it cannot fail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Canned {
    /// Status, 200 to 599.
    pub status: u16,
    /// Sent verbatim as `Retry-After` (absent: no header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
    /// Sent verbatim as the body (may be empty).
    pub body: String,
    /// Sent verbatim as `Content-Type` (absent: no header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

/// Where the phases get their faults from.
pub trait ChargeFaults: Send + Sync {
    /// The fault the request of `customer` about to do work takes, if any;
    /// `key` is `None` on the naive endpoint, `fingerprint` its payload's.
    fn take(&self, customer: &str, key: Option<&str>, fingerprint: &str) -> Option<ChargeFault>;
}

/// No faults: production.
#[derive(Debug, Default)]
pub struct NoChargeFaults;

impl ChargeFaults for NoChargeFaults {
    fn take(&self, _: &str, _: Option<&str>, _: &str) -> Option<ChargeFault> {
        None
    }
}
