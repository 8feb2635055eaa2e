//! The one-commit mode on SQLite: a key this process holds, and its phase 3
//! on the writer, which writes the key's row, done, with the application's
//! write.

use async_trait::async_trait;

use super::database::Database;
use super::holds::Holding;
use super::{keys, SqliteCommit};
use crate::hold::HeldKey;
use crate::ids::now_ms;
use crate::model::{Completed, KeyRequest};
use crate::store::StoreResult;

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
