//! The keys this instance is working on right now.
//!
//! A request slower than the lock timeout has a stale lock, and once the
//! provider has answered it the recovery would find something to complete and
//! take the key over under the request's feet (which then answers 409). The
//! recovery of the same instance skips the keys its own requests hold; another
//! instance's recovery still may take them over (the lock timeout is the
//! contract between instances), and the lock check of phase 3 keeps that safe.
//!
//! Holds are counted: two requests of one key (a double-click) both hold it,
//! and the one that is answered at once (409, a replay) lets go without
//! taking the key from the one still running.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Keys (customer, key) with a request running in this process, and how many
/// requests hold each; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct InFlight(Arc<Mutex<HashMap<(String, String), usize>>>);

/// Holds one key until dropped (however the request ends).
pub struct Held {
    set: InFlight,
    entry: (String, String),
}

impl InFlight {
    /// Marks `(customer, key)` as running here until the guard is dropped.
    pub fn hold(&self, customer: &str, key: &str) -> Held {
        let entry = (customer.to_string(), key.to_string());
        if let Ok(mut s) = self.0.lock() {
            *s.entry(entry.clone()).or_insert(0) += 1;
        }
        Held {
            set: self.clone(),
            entry,
        }
    }

    /// True while a request of this process runs `(customer, key)`.
    pub fn contains(&self, customer: &str, key: &str) -> bool {
        self.0
            .lock()
            .map(|s| s.contains_key(&(customer.to_string(), key.to_string())))
            .unwrap_or(false)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Ok(mut s) = self.set.0.lock() {
            if let Some(n) = s.get_mut(&self.entry) {
                *n -= 1;
                if *n == 0 {
                    s.remove(&self.entry);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_held_until_its_guard_drops() {
        let f = InFlight::default();
        let held = f.hold("c", "k");
        let twice = f.hold("c", "other");
        assert!(f.contains("c", "k") && f.contains("c", "other"));
        assert!(!f.contains("d", "k"));
        drop(held);
        assert!(!f.contains("c", "k"));
        drop(twice);
        assert!(!f.contains("c", "other"));
    }

    #[test]
    fn a_key_two_requests_hold_stays_held_until_both_are_done() {
        // A double-click's second request holds the key while it finds the
        // first one running, and lets go at once: the first still runs.
        let f = InFlight::default();
        let running = f.hold("c", "k");
        let duplicate = f.hold("c", "k");
        drop(duplicate);
        assert!(f.contains("c", "k"), "the first request still holds it");
        drop(running);
        assert!(!f.contains("c", "k"));
    }
}
