//! Running a store's migrations on an SQLite file: under `BEGIN IMMEDIATE`,
//! so the server and worker processes opening one file at once take turns.

use rusqlite::{params, Connection, TransactionBehavior};

use crate::ids::now_ms;
use crate::migrations::{pending, Migration, VERSIONS_TABLE};
use crate::store::{StoreError, StoreResult};

/// Applies the migrations of `all` (in `scope`) that `conn`'s file has not
/// had yet.
pub fn migrate(conn: &mut Connection, scope: &str, all: &[Migration]) -> StoreResult<()> {
    let fail =
        |e: rusqlite::Error| StoreError::failed_by(format!("schema migration of {scope}"), e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(fail)?;
    tx.execute_batch(VERSIONS_TABLE).map_err(fail)?;
    let applied: Vec<i64> = tx
        .prepare("SELECT version FROM schema_migrations WHERE scope = ?1")
        .and_then(|mut q| q.query_map([scope], |r| r.get(0))?.collect())
        .map_err(fail)?;
    for m in pending(all, &applied).map_err(StoreError::failed)? {
        for sql in m.sql {
            tx.execute_batch(sql).map_err(fail)?;
        }
        tx.execute(
            "INSERT INTO schema_migrations (scope, version, name, applied_at) VALUES (?1, ?2, ?3, ?4)",
            params![scope, m.version, m.name, now_ms()],
        )
        .map_err(fail)?;
        tracing::info!(scope, version = m.version, name = m.name, "schema migrated");
    }
    tx.commit().map_err(fail)
}
