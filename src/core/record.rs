//! The stored record of one checkout attempt (versioned JSON) and the storage key names.

use crate::core::ascii::{digits, rsplit_byte};
use crate::core::json::{push_u64, write_str};
use crate::core::state::State;
use crate::prelude::*;

/// The record format this crate writes and the only one it reads.
///
/// `rev` was added to version 1 as an optional field rather than as a version 2: a tab
/// still running an older release reads such a record as it always did (it ignores unknown
/// fields), where a new version number would make it set the record aside as unreadable and
/// start over with another key while the first key's request may be in flight. For the same
/// reason a `submittedAt` field that an earlier release wrote is read past, not refused.
pub const RECORD_VERSION: u32 = 1;

/// The last final response of an attempt, kept so a refresh or a second tab can show it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// The raw response body text.
    pub body: String,
    /// The server said `Idempotent-Replayed: true`.
    pub replayed: bool,
}

/// One checkout attempt as stored: everything but the payload itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Format version, [`RECORD_VERSION`].
    pub version: u32,
    /// How many times the scope's lock holders stored a record, counted on from attempt to
    /// attempt: a new attempt's first store counts on from the highest `rev` its lock
    /// holder read (core::sync's `began_after` orders two attempts by it, not by the clock,
    /// which can be set back between them). 0 for a record that was never stored, one an
    /// older release wrote (it had no such field), or a Web Storage copy that IndexedDB
    /// does not hold (its write failed or it is missing; a tab without IndexedDB stores
    /// and posts its records so). Another tab's copy with a higher
    /// `rev` of the same key is newer.
    pub rev: u64,
    /// The idempotency key (UUID).
    pub key: String,
    /// The checkout scope the page chose.
    pub scope: String,
    /// Fingerprint of the payload first sent with this key; `None` until then.
    pub fingerprint: Option<String>,
    /// Where the attempt stands.
    pub state: State,
    /// HTTP tries sent with this key.
    pub attempts: u32,
    /// When the key was made (ms since epoch).
    pub created_at: f64,
    /// After this the key is never reused (ms since epoch).
    pub expires_at: f64,
    /// Last change (ms since epoch).
    pub updated_at: f64,
    /// The final response, once there is one.
    pub response: Option<StoredResponse>,
}

impl Record {
    /// A fresh record for `key` that expires `ttl_ms` after `now_ms`.
    pub fn new(
        key: impl Into<String>,
        scope: impl Into<String>,
        now_ms: f64,
        ttl_ms: f64,
    ) -> Record {
        Record {
            version: RECORD_VERSION,
            rev: 0,
            key: key.into(),
            scope: scope.into(),
            fingerprint: None,
            state: State::Fresh,
            attempts: 0,
            created_at: now_ms,
            expires_at: now_ms + ttl_ms,
            updated_at: now_ms,
            response: None,
        }
    }

    /// Whether the key is too old to reuse at `now_ms`.
    pub fn is_expired(&self, now_ms: f64) -> bool {
        now_ms >= self.expires_at
    }

    /// Applies the page's current TTL to a record read from storage: `expires_at` becomes at
    /// most `created_at + ttl_ms`. The stored expiry was computed with the TTL of the page
    /// that made the key; a page that has since lowered `ttlSeconds` must not reuse a key
    /// older than its own limit ("a key older than this is never reused").
    pub fn limit_ttl(&mut self, ttl_ms: f64) {
        let cap = self.created_at + ttl_ms;
        if self.expires_at > cap {
            self.expires_at = cap;
        }
    }

    /// The stored JSON text (`"v":1`, then `"rev"`); timestamps as whole ms.
    pub fn encode(&self) -> String {
        let mut o = String::with_capacity(256 + self.response.as_ref().map_or(0, |r| r.body.len()));
        o.push_str("{\"v\":");
        push_u64(&mut o, self.version as u64);
        o.push_str(",\"rev\":");
        push_u64(&mut o, self.rev);
        o.push_str(",\"key\":");
        write_str(&self.key, &mut o);
        o.push_str(",\"scope\":");
        write_str(&self.scope, &mut o);
        o.push_str(",\"fp\":");
        match &self.fingerprint {
            Some(f) => write_str(f, &mut o),
            None => o.push_str("null"),
        }
        o.push_str(",\"state\":\"");
        o.push_str(self.state.as_str());
        o.push_str("\",\"attempts\":");
        push_u64(&mut o, self.attempts as u64);
        for (name, t) in [
            (",\"createdAt\":", self.created_at),
            (",\"expiresAt\":", self.expires_at),
            (",\"updatedAt\":", self.updated_at),
        ] {
            o.push_str(name);
            push_u64(&mut o, ms(t));
        }
        o.push_str(",\"response\":");
        match &self.response {
            Some(r) => {
                o.push_str("{\"status\":");
                push_u64(&mut o, r.status as u64);
                o.push_str(",\"body\":");
                write_str(&r.body, &mut o);
                o.push_str(",\"replayed\":");
                o.push_str(if r.replayed { "true" } else { "false" });
                o.push('}');
            }
            None => o.push_str("null"),
        }
        o.push('}');
        o
    }
}

/// Largest integer a JS number holds exactly; timestamps beyond it are corrupt.
pub(crate) const MAX_SAFE: u64 = (1 << 53) - 1;

/// Whole ms of a timestamp; `as` saturates, so a negative or NaN time becomes 0.
fn ms(t: f64) -> u64 {
    t as u64
}

/// Whether `s` has the 8-4-4-4-12 hex shape of a UUID (any version, any case).
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn join(ns: &str, mid: &str, scope: &str) -> String {
    let mut s = String::with_capacity(ns.len() + mid.len() + scope.len());
    s.push_str(ns);
    s.push_str(mid);
    s.push_str(scope);
    s
}

/// Storage key of the record for `scope`: `{ns}:v1:{scope}`.
pub fn record_key(namespace: &str, scope: &str) -> String {
    join(namespace, ":v1:", scope)
}

/// The start of the storage keys of the attempts ended for `scope` (core::ended):
/// `{ns}:ended:{scope}`, then `:` and the attempt's key.
pub fn ended_key(namespace: &str, scope: &str) -> String {
    join(namespace, ":ended:", scope)
}

/// Storage key of the flag that the scope has ended attempts in a backend (core::ended):
/// `{ns}:ends:{scope}`, written there before each of their marks, so a backend without it
/// holds none and is not listed for them.
pub fn ends_key(namespace: &str, scope: &str) -> String {
    join(namespace, ":ends:", scope)
}

/// Storage key an unreadable record is moved to: `{ns}:corrupt:{scope}:{now}`.
pub fn quarantine_key(namespace: &str, scope: &str, now_ms: f64) -> String {
    let mut s = join(namespace, ":corrupt:", scope);
    s.push(':');
    push_u64(&mut s, ms(now_ms));
    s
}

/// The scope of a record's storage key in `namespace`; `None` for any other key.
pub fn parse_record_key<'a>(namespace: &str, storage_key: &'a str) -> Option<&'a str> {
    let rest = storage_key.strip_prefix(namespace)?.strip_prefix(":v1:")?;
    if rest.is_empty() {
        None
    } else {
        Some(rest)
    }
}

/// How long a record set aside as unreadable (under [`quarantine_key`]) is kept: 7 days.
///
/// idemkey never reads a quarantined copy again; it is kept only so that a developer or
/// support person can look at what broke (devtools, a user's report after a weekend).
/// A week covers that, while a page whose records keep getting corrupted (another script
/// writing our keys, a format bug) cannot fill the origin's few MiB of storage with copies
/// that nobody reads: without a limit they would accumulate forever.
pub const QUARANTINE_RETENTION_MS: f64 = 7.0 * 86_400_000.0;

/// The scope and the time (ms) of a quarantine key `{ns}:corrupt:{scope}:{ms}` in
/// `namespace`; `None` for any other key (including a suffix that is not decimal digits).
pub fn parse_quarantine_key<'a>(namespace: &str, storage_key: &'a str) -> Option<(&'a str, u64)> {
    let rest = storage_key
        .strip_prefix(namespace)?
        .strip_prefix(":corrupt:")?;
    // Scopes may contain ':'; the time is after the last one.
    let (scope, ms) = rsplit_byte(rest, b':')?;
    if scope.is_empty() || ms.len() > 16 {
        return None;
    }
    Some((scope, digits(ms)?))
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "record_keys_tests.rs"]
mod keys_tests;
