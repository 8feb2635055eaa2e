//! The SQLite file: connections, pragmas and schema.
//!
//! Writes go through one connection on a writer thread of its own
//! ([`Writer`]): SQLite admits one writer at a time anyway, and queueing in
//! one FIFO beats many threads spinning in SQLite's busy handler; writes that
//! queue while a commit syncs are committed together. Every batch still uses
//! `BEGIN IMMEDIATE` and a busy timeout, so a second process on the same file
//! (an old server still shutting down) is handled by SQLite's own locking.
//! Reads use a small pool of extra connections; WAL lets them run beside the
//! writer. Reads run on tokio's blocking pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::store::migrations::Migration;
use crate::store::sqlite::migrate::migrate;
use crate::store::sqlite::writer::Writer;
use crate::store::{StoreError, StoreResult};

/// How long a statement waits for another process's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle read connections kept around.
const MAX_IDLE_READERS: usize = 8;
/// Prepared statements kept per connection: the writer's batch statements and
/// every hot write fit (rusqlite keeps 16 by default, which they would just fill).
const STATEMENT_CACHE: usize = 32;

/// Schema of the server's own tables as 0.1.0 made them: part of migration
/// 1, never changed (a change is a new migration). The provider stand-in
/// keeps its own (see `provider_payments::SCHEMA`).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS idempotency_keys (
    customer        TEXT    NOT NULL,
    idem_key        TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    -- One id per operation: kept when a stale request is taken over, new when an
    -- expired key starts a new operation. The provider dedups on it.
    reservation     TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('in_progress', 'done')),
    lock_owner      TEXT    NOT NULL,
    locked_at       INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    response_status INTEGER,
    response_type   TEXT,
    response_body   BLOB,
    charge_id       TEXT,
    PRIMARY KEY (customer, idem_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);

CREATE TABLE IF NOT EXISTS charges (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT    NOT NULL UNIQUE,
    customer     TEXT    NOT NULL,
    idem_key     TEXT,            -- NULL for the naive endpoint
    reservation  TEXT    UNIQUE,  -- at most one charge per keyed operation
    amount       INTEGER NOT NULL,
    currency     TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    provider_ref TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS charges_customer ON charges (customer, seq);
";

/// Handle to one SQLite file; cheap to clone.
#[derive(Clone)]
pub struct Sqlite {
    path: Arc<PathBuf>,
    writer: Writer,
    readers: Arc<Mutex<Vec<Connection>>>,
}

fn open_conn(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // WAL: readers never block the writer. synchronous=FULL: a commit is on disk
    // (WAL fsynced) before COMMIT returns, so an answer is never sent for work a
    // power cut could still undo.
    let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

impl Sqlite {
    /// Opens (creating if needed) the database file and its parent
    /// directory, and brings its schema up to `migrations` (of `scope`).
    pub fn open(path: &Path, scope: &str, migrations: &[Migration]) -> Result<Sqlite, String> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        let mut conn =
            open_conn(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        migrate(&mut conn, scope, migrations)?;
        Ok(Sqlite {
            path: Arc::new(path.to_path_buf()),
            writer: Writer::start(conn, scope)?,
            readers: Arc::new(Mutex::new(Vec::new())),
        })
    }

    /// Runs `f` with the writer connection, in the writer's next batch (see
    /// [`Writer::write`]): `f` may open savepoints, not a transaction.
    pub async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        self.writer.write(f).await
    }

    /// Runs `f` with a read connection on the blocking pool.
    pub async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let path = self.path.clone();
        let readers = self.readers.clone();
        tokio::task::spawn_blocking(move || {
            let pooled = readers
                .lock()
                .map_err(|_| StoreError::Failed("reader pool poisoned".into()))?
                .pop();
            let conn = match pooled {
                Some(c) => c,
                None => open_conn(&path)?,
            };
            let out = f(&conn).map_err(StoreError::from);
            if let Ok(mut idle) = readers.lock() {
                if idle.len() < MAX_IDLE_READERS {
                    idle.push(conn);
                }
            }
            out
        })
        .await
        .map_err(|e| StoreError::Failed(format!("read task: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The durability promise ("no answer before its commit is on disk")
    /// rests on these settings of the connections that write and read.
    #[tokio::test]
    async fn connections_are_wal_synchronous_full_with_a_busy_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let store = Sqlite::open(
            &dir.path().join("sub").join("t.db"),
            "server",
            super::super::MIGRATIONS,
        )
        .unwrap();
        let pragmas = |conn: &Connection| -> rusqlite::Result<(String, i64, i64)> {
            let q = |p: &str| {
                conn.query_row(&format!("PRAGMA {p}"), [], |r| {
                    r.get::<_, rusqlite::types::Value>(0)
                })
            };
            let (
                rusqlite::types::Value::Text(mode),
                rusqlite::types::Value::Integer(sync),
                rusqlite::types::Value::Integer(busy),
            ) = (q("journal_mode")?, q("synchronous")?, q("busy_timeout")?)
            else {
                return Err(rusqlite::Error::InvalidQuery);
            };
            Ok((mode, sync, busy))
        };
        let expected = ("wal".to_string(), 2, BUSY_TIMEOUT.as_millis() as i64);
        assert_eq!(
            store.write(move |c| pragmas(c)).await.unwrap(),
            expected,
            "writer"
        );
        assert_eq!(
            store.read(move |c| pragmas(c)).await.unwrap(),
            expected,
            "reader"
        );
    }
}
