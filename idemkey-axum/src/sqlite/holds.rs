//! The keys this process's requests hold in the one-commit mode, in memory:
//! one process per database file, as its one writer already assumes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// Keys `(principal, key)` a request of this process holds; cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Holds(Arc<Mutex<HashSet<(String, String)>>>);

/// One key held, until dropped.
pub(crate) struct Holding {
    holds: Holds,
    entry: (String, String),
}

impl Holds {
    /// Holds `(principal, key)`; `None` when a request holds it already.
    pub(crate) fn take(&self, principal: &str, key: &str) -> Option<Holding> {
        let entry = (principal.to_string(), key.to_string());
        let mut set = self.0.lock().unwrap_or_else(|e| e.into_inner());
        set.insert(entry.clone()).then(|| Holding {
            holds: self.clone(),
            entry,
        })
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        let mut set = self.holds.0.lock().unwrap_or_else(|e| e.into_inner());
        set.remove(&self.entry);
    }
}

#[cfg(test)]
mod tests {
    use crate::sqlite::holds::Holds;

    #[test]
    fn a_key_is_held_once_until_its_holding_drops() {
        let holds = Holds::default();
        let first = holds.take("c", "k").expect("free");
        assert!(holds.take("c", "k").is_none(), "held");
        let other = holds.take("c", "l").expect("another key");
        drop(first);
        assert!(holds.take("c", "k").is_some(), "let go");
        drop(other);
    }
}
