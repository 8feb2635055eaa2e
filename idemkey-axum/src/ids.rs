//! Identifiers, random or derived from a key, and the wall clock.
//!
//! Random ids only need to be unique, not secret, so they come from std's
//! randomly seeded SipHash keys (seeded from the OS once per process) mixed
//! with a counter and the clock, instead of pulling in a random-number crate.
//! A derived operation id is SHA-256 of what names one operation, each part
//! length-prefixed so that no two requests' parts run together.

use std::collections::hash_map::RandomState;
use std::fmt::Write;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::model::KeyRequest;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn random_u64() -> u64 {
    static SEED: OnceLock<RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = SEED.get_or_init(RandomState::new).build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// `prefix_` followed by 24 hex digits (96 random bits).
pub fn new_id(prefix: &str) -> String {
    let (a, b) = (random_u64(), random_u64());
    format!("{prefix}_{a:016x}{:08x}", b as u32)
}

/// SHA-256 of `parts`, each preceded by its length.
fn digest(parts: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p.as_bytes());
    }
    h.finalize().into()
}

/// The operation id of the one-commit mode: `op_` and 32 hex digits derived
/// from the request's route, principal and key, the same on every instance
/// and after a restart. Not from the payload: after a crash nothing is
/// stored to compare a retry's payload with, and a retry with another one
/// must still reach the provider under the first try's id (which answers
/// its first payment, or refuses the other payload), never a new one that
/// pays again.
pub fn operation_id(req: &KeyRequest) -> String {
    let d = digest(&[&req.route, &req.customer, &req.key]);
    let mut id = String::with_capacity(3 + 32);
    id.push_str("op_");
    for b in &d[..16] {
        // Writing to a String cannot fail.
        let _ = write!(id, "{b:02x}");
    }
    id
}

/// A 64-bit number for the key `(principal, key)` (a PostgreSQL advisory
/// lock's): two keys share one with a chance of 2^-64.
pub fn key_number(principal: &str, key: &str) -> i64 {
    let d = digest(&[principal, key]);
    i64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(route: &str, customer: &str, key: &str, fingerprint: &str) -> KeyRequest {
        KeyRequest {
            route: route.into(),
            customer: customer.into(),
            key: key.into(),
            fingerprint: fingerprint.into(),
        }
    }

    #[test]
    fn a_derived_operation_id_is_one_per_route_principal_and_key() {
        let id = operation_id(&req("POST /r", "a", "k", "fp"));
        assert_eq!(id, operation_id(&req("POST /r", "a", "k", "fp")));
        // Whatever the payload: a retry after a crash is the first try's id.
        assert_eq!(id, operation_id(&req("POST /r", "a", "k", "fq")));
        assert!(id.starts_with("op_") && id.len() == 35, "{id}");
        for other in [
            req("POST /s", "a", "k", "fp"),
            req("POST /r", "b", "k", "fp"),
            req("POST /r", "a", "l", "fp"),
            // Parts that run together are still apart.
            req("POST /r", "a k", "", "fp"),
            req("POST /r", "a", " k", "fp"),
        ] {
            assert_ne!(id, operation_id(&other), "{other:?}");
        }
        assert_ne!(key_number("a b", "c"), key_number("a", "b c"));
        assert_eq!(key_number("a", "b"), key_number("a", "b"));
    }

    #[test]
    fn ids_are_distinct_and_shaped() {
        let ids: std::collections::HashSet<String> = (0..10_000).map(|_| new_id("ch")).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|i| i.len() == 27 && i.starts_with("ch_")));
    }
}
