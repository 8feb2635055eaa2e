//! The SQLite file: connections, pragmas, migrations; the application's
//! writes and the key table's share its one writer.
//!
//! Writes go through one connection on a writer thread of its own
//! ([`Writer`]): SQLite admits one writer at a time anyway, and queueing in
//! one FIFO beats many threads spinning in SQLite's busy handler; writes that
//! queue while a commit syncs are committed together. Every batch still uses
//! `BEGIN IMMEDIATE` and a busy timeout, so a second process on the same file
//! (an old server still shutting down) is handled by SQLite's own locking.
//! Reads use a small pool of extra connections; WAL lets them run beside the
//! writer. Reads run on tokio's blocking pool, but for the one-commit mode's
//! read of one key, which runs on the calling task ([`Database::read_here`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::migrations::Migration;
use crate::sqlite::holds::Holds;
use crate::sqlite::migrate::migrate;
use crate::sqlite::writer::Writer;
use crate::store::{StoreError, StoreResult};

/// How long a statement waits for another process's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle read connections kept around.
const MAX_IDLE_READERS: usize = 8;
/// Prepared statements kept per connection: the writer's batch statements and
/// every hot write fit (rusqlite keeps 16 by default, which they would just fill).
const STATEMENT_CACHE: usize = 32;

/// Handle to one SQLite file; cheap to clone. Open it once per process and
/// run every write of the application through [`Database::write`]: the key
/// table's writes queue on the same writer, so phase 3 and the
/// application's own write share one transaction.
#[derive(Clone)]
pub struct Database {
    path: Arc<PathBuf>,
    writer: Writer,
    readers: Arc<Mutex<Vec<Connection>>>,
    /// The keys this process's requests hold in the one-commit mode.
    holds: Holds,
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

impl Database {
    /// Opens (creating if needed) the database file and its parent
    /// directory, and brings its schema up to `migrations` (of `scope`).
    pub fn open(path: &Path, scope: &str, migrations: &[Migration]) -> StoreResult<Database> {
        Database::open_with(path, &[(scope, migrations)])
    }

    /// [`Database::open`] with several scopes of migrations, each run in
    /// order: the application's own and the key table's
    /// ([`MIGRATIONS`](crate::sqlite::MIGRATIONS) in scope
    /// [`SCOPE`](crate::sqlite::SCOPE)), say.
    pub fn open_with(path: &Path, scopes: &[(&str, &[Migration])]) -> StoreResult<Database> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::failed_by(format!("cannot create {}", parent.display()), e)
            })?;
        }
        let mut conn = open_conn(path)
            .map_err(|e| StoreError::failed_by(format!("cannot open {}", path.display()), e))?;
        for (scope, migrations) in scopes {
            migrate(&mut conn, scope, migrations)?;
        }
        let name = scopes.first().map_or("db", |s| s.0);
        Ok(Database {
            path: Arc::new(path.to_path_buf()),
            writer: Writer::start(conn, name)?,
            readers: Arc::new(Mutex::new(Vec::new())),
            holds: Holds::default(),
        })
    }

    /// The keys this process's requests hold in the one-commit mode.
    pub(crate) fn holds(&self) -> &Holds {
        &self.holds
    }

    /// Runs `f` with the writer connection, in the writer's next batch (see
    /// the writer thread): `f` may open savepoints, not a transaction.
    pub async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        self.writer.write(f).await
    }

    /// Runs `f` with an idle read connection on the calling thread, never
    /// waiting for a lock: the hop to the blocking pool and back costs more
    /// than a read of one row by its primary key, which WAL lets run beside
    /// the writer without waiting. Where no connection is idle, or SQLite
    /// answers busy (a checkpoint or recovery holds the file), `f` runs again
    /// through [`Database::read`], which waits as usual.
    pub(crate) async fn read_here<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Clone + Send + 'static,
    {
        let idle = self.readers.lock().ok().and_then(|mut idle| idle.pop());
        if let Some(conn) = idle {
            let out = conn
                .busy_timeout(Duration::ZERO)
                .and_then(|_| f.clone()(&conn))
                .and_then(|out| conn.busy_timeout(BUSY_TIMEOUT).map(|_| out));
            let busy = matches!(
                out.as_ref().map_err(|e| e.sqlite_error_code()),
                Err(Some(
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ))
            );
            if busy {
                let _ = conn.busy_timeout(BUSY_TIMEOUT);
            }
            give_back(&self.readers, conn);
            if !busy {
                return out.map_err(StoreError::from);
            }
        }
        self.read(f).await
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
                .map_err(|_| StoreError::failed("reader pool poisoned"))?
                .pop();
            let conn = match pooled {
                Some(c) => c,
                None => open_conn(&path)?,
            };
            let out = f(&conn).map_err(StoreError::from);
            give_back(&readers, conn);
            out
        })
        .await
        .map_err(|e| StoreError::failed_by("a read task failed", e))?
    }
}

/// Puts a read connection back among the idle ones, unless enough are idle.
fn give_back(readers: &Mutex<Vec<Connection>>, conn: Connection) {
    if let Ok(mut idle) = readers.lock() {
        if idle.len() < MAX_IDLE_READERS {
            idle.push(conn);
        }
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
        let store = Database::open(
            &dir.path().join("sub").join("t.db"),
            super::super::SCOPE,
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

    /// A read on the calling task that SQLite answers busy (another process
    /// holds the file) runs again on the blocking pool, which waits for the
    /// lock as every read does, instead of failing at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_here_answered_busy_runs_again_where_reads_wait() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let store = Database::open(
            &dir.path().join("t.db"),
            super::super::SCOPE,
            super::super::MIGRATIONS,
        )
        .unwrap();
        // An idle reader for read_here to take.
        store.read(|_| Ok(())).await.unwrap();
        let tries = Arc::new(AtomicUsize::new(0));
        let read = {
            let tries = tries.clone();
            move |c: &Connection| {
                if tries.fetch_add(1, Ordering::SeqCst) == 0 {
                    return Err(rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                        None,
                    ));
                }
                c.query_row("SELECT COUNT(*) FROM idempotency_keys", [], |r| {
                    r.get::<_, i64>(0)
                })
            }
        };
        assert_eq!(store.read_here(read).await.unwrap(), 0);
        assert_eq!(tries.load(Ordering::SeqCst), 2, "busy, then read");
    }
}
