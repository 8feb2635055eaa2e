//! The storage-lease fallback for the cross-tab lock where the Web Locks API is missing:
//! a `owner|until` value under the scope's lease key that expires on its own, and the rules
//! for taking, renewing and releasing it.

use crate::core::ascii::{digits, rsplit_byte};
use crate::core::json::push_u64;
use crate::prelude::*;

/// How long a lease holds without renewal; a holder renews well before this passes.
pub const LEASE_MS: f64 = 10_000.0;

/// How often a waiting tab re-reads the lease.
pub const LEASE_POLL_MS: u32 = 100;

/// How often the holder renews its lease while it holds the scope, on a timer.
///
/// One try may take up to `timeoutMs` (default 10 s, at most 10 min) and one wait
/// `backoff.maxMs` or a server's `Retry-After`, all longer than [`LEASE_MS`]: a lease renewed
/// only between tries would lapse mid-request and let a second tab send. A timer keeps it
/// alive for exactly as long as the holder lives; a closed tab stops renewing, so its lease
/// lapses after [`LEASE_MS`] and never blocks the scope for good. Once a second is also the
/// coarsest timer a background tab gets (Chromium's throttling), so renewals still land
/// several times per lease.
pub const LEASE_RENEW_MS: u32 = 1_000;

/// A tab's claim on a scope until `until_ms` (ms since epoch).
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    /// The holder's id (random per tab and checkout).
    pub owner: String,
    /// When the claim lapses unless renewed.
    pub until_ms: f64,
}

impl Lease {
    /// A lease for `owner` lasting [`LEASE_MS`] from `now_ms`.
    pub fn new(owner: &str, now_ms: f64) -> Lease {
        Lease {
            owner: owner.into(),
            until_ms: now_ms + LEASE_MS,
        }
    }

    /// The stored form, `owner|until` with `until` in whole ms.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(self.owner.len() + 16);
        out.push_str(&self.owner);
        out.push('|');
        // `as` saturates: a negative or NaN time is written as 0.
        push_u64(&mut out, self.until_ms as u64);
        out
    }

    /// Reads the stored form; `None` for anything malformed (treated as no lease).
    pub fn decode(s: &str) -> Option<Lease> {
        let (owner, until) = rsplit_byte(s, b'|')?;
        if owner.is_empty() {
            return None;
        }
        let until = digits(until)?;
        Some(Lease {
            owner: owner.into(),
            until_ms: until as f64,
        })
    }
}

/// Whether `me` may take (or renew) the lease at `now_ms` given the stored one.
///
/// A lease further ahead than [`LEASE_MS`] cannot come from a well-behaved holder
/// (a clock jumped), so it is taken over rather than blocking the scope for ever.
pub fn can_acquire(current: Option<&Lease>, me: &str, now_ms: f64) -> bool {
    match current {
        None => true,
        Some(l) => l.owner == me || l.until_ms <= now_ms || l.until_ms - now_ms > LEASE_MS,
    }
}

/// Whether the stored lease is `me`'s: only then is it renewed or released (a lease that
/// lapsed and that another tab took is that tab's).
pub fn is_ours(current: Option<&Lease>, me: &str) -> bool {
    current.is_some_and(|l| l.owner == me)
}

#[cfg(test)]
#[path = "lease_tests.rs"]
mod tests;
