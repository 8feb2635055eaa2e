//! The keys this instance is working on right now.
//!
//! A request slower than `--lock-timeout` has a stale lock, and once the
//! provider has answered it the recovery would find something to complete and
//! take the key over under the request's feet (which then answers 409). The
//! recovery of the same instance skips the keys its own requests hold; another
//! instance's recovery still may take them over (the lock timeout is the
//! contract between instances), and the lock check of phase 3 keeps that safe.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// Keys (customer, key) with a request running in this process; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct InFlight(Arc<Mutex<HashSet<(String, String)>>>);

/// Holds one key in the set until dropped (however the request ends).
pub struct Held {
    set: InFlight,
    entry: (String, String),
}

impl InFlight {
    /// Marks `(customer, key)` as running here until the guard is dropped.
    pub fn hold(&self, customer: &str, key: &str) -> Held {
        let entry = (customer.to_string(), key.to_string());
        if let Ok(mut s) = self.0.lock() {
            s.insert(entry.clone());
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
            .map(|s| s.contains(&(customer.to_string(), key.to_string())))
            .unwrap_or(false)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Ok(mut s) = self.set.0.lock() {
            s.remove(&self.entry);
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
}
