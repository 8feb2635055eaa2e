//! Random identifiers and the wall clock.
//!
//! Ids only need to be unique, not secret, so they come from std's randomly
//! seeded SipHash keys (seeded from the OS once per process) mixed with a
//! counter and the clock, instead of pulling in a random-number crate.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

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

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_distinct_and_shaped() {
        let ids: std::collections::HashSet<String> =
            (0..10_000).map(|_| super::new_id("ch")).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|i| i.len() == 27 && i.starts_with("ch_")));
    }
}
