//! The one-commit mode on SQLite: the keys this process's requests hold,
//! in memory (one process per database file), and phase 3 on the writer,
//! which writes the key's row, done, with the application's write.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::{keys, Database, SqliteCommit};
use crate::hold::HeldKey;
use crate::ids::now_ms;
use crate::model::{Completed, KeyRequest};
use crate::store::StoreResult;

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

/// A key this process holds, with what its phase 3 needs.
pub(super) struct SqliteHeld {
    pub(super) db: Database,
    pub(super) ttl_ms: i64,
    pub(super) holding: Holding,
}

#[async_trait]
impl<W: SqliteCommit> HeldKey<W> for SqliteHeld {
    async fn complete(
        self: Box<Self>,
        req: &KeyRequest,
        operation_id: &str,
        write: W,
    ) -> StoreResult<Completed> {
        let (r, op, ttl_ms) = (req.clone(), operation_id.to_string(), self.ttl_ms);
        let done = self
            .db
            .write(move |conn| keys::complete_held(conn, &r, &op, now_ms(), ttl_ms, write))
            .await;
        // The row is committed (or not) before the key is let go.
        drop(self.holding);
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
