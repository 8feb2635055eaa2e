//! The key store on SQLite: one file, WAL, `synchronous=FULL`, one writer
//! thread with group commit ([`Database`]), readers beside it.
//!
//! Writes go through one connection (SQLite admits one writer at a time).
//! A new key is reserved by one `INSERT … ON CONFLICT DO NOTHING` on that
//! writer, with no read before it (a look-up first would add a hop to a
//! reader thread to every new request); a key that has a row is then looked
//! up on reader connections beside the writer. The application's write of
//! phase 3 runs on the writer, inside the savepoint that stores the
//! response. In the one-commit mode a key is held in this process's memory
//! (one process per file) and has no row until that savepoint writes it.

mod database;
mod held;
mod holds;
mod keys;
mod migrate;
mod writer;

use async_trait::async_trait;
use rusqlite::Connection;

pub use self::database::Database;
use crate::hold::Hold;
use crate::ids::now_ms;
use crate::migrations::Migration;
use crate::model::{Completed, KeyRequest, Lock, Lookup, Reserved, StaleKey};
use crate::store::{
    proceeding, reserve_to_the_end, spawn_release, KeyStore, StoreError, StoreResult, Timing,
    Written,
};

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        match e.sqlite_error_code() {
            // Another process held the file past the busy timeout.
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::Unavailable {
                    message: e.to_string(),
                    source: Some(std::sync::Arc::new(e)),
                }
            }
            _ => StoreError::Failed {
                message: e.to_string(),
                source: Some(std::sync::Arc::new(e)),
            },
        }
    }
}

/// The key table as its first version made it (never changed: a change is a
/// new migration). `charge_id` holds [`Written::with_record_id`]'s id.
pub const KEYS_SCHEMA: &str = "
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
";

/// In-progress keys by lock age, for recovery's scan.
pub const STALE_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS idempotency_keys_stale ON idempotency_keys (locked_at)
                WHERE state = 'in_progress'";

/// Each key's route (keys stored before have none, `''`, and the first
/// route that asks for one adopts it; recovery scans one route's keys), and
/// the headers a stored answer names (a JSON array of pairs).
pub(crate) const ROUTES_AND_HEADERS: &str = "
ALTER TABLE idempotency_keys ADD COLUMN route TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN response_headers TEXT;
CREATE INDEX IF NOT EXISTS idempotency_keys_route_stale ON idempotency_keys (route, locked_at)
    WHERE state = 'in_progress';
DROP INDEX IF EXISTS idempotency_keys_stale;
";

/// The key table rebuilt as a rowid table, its primary key an index of its
/// own. A `WITHOUT ROWID` table keeps each whole row in the primary key's
/// order: keys are random, so every new row (an answer of several hundred
/// bytes) landed on a page of its own and split it, where a rowid table
/// appends rows in the order they come and only the small index entry lands
/// at random.
pub(crate) const ROWS_IN_INSERTION_ORDER: &str = "
CREATE TABLE idempotency_keys_rowid (
    customer         TEXT    NOT NULL,
    idem_key         TEXT    NOT NULL,
    fingerprint      TEXT    NOT NULL,
    reservation      TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN ('in_progress', 'done')),
    lock_owner       TEXT    NOT NULL,
    locked_at        INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL,
    response_status  INTEGER,
    response_type    TEXT,
    response_body    BLOB,
    charge_id        TEXT,
    route            TEXT    NOT NULL DEFAULT '',
    response_headers TEXT,
    PRIMARY KEY (customer, idem_key)
);
INSERT INTO idempotency_keys_rowid
    (customer, idem_key, fingerprint, reservation, state, lock_owner, locked_at, created_at,
     expires_at, response_status, response_type, response_body, charge_id, route, response_headers)
SELECT customer, idem_key, fingerprint, reservation, state, lock_owner, locked_at, created_at,
       expires_at, response_status, response_type, response_body, charge_id, route, response_headers
FROM idempotency_keys ORDER BY created_at;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_rowid RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
CREATE INDEX idempotency_keys_route_stale ON idempotency_keys (route, locked_at)
    WHERE state = 'in_progress';
";

/// The scope the key table's migrations are recorded under.
pub const SCOPE: &str = "idemkey";

/// The key table's schema, version by version (scope [`SCOPE`]).
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "idempotency keys",
        sql: &[KEYS_SCHEMA],
    },
    Migration {
        version: 2,
        name: "index of in-progress keys by lock age, for recovery's scan",
        sql: &[STALE_INDEX],
    },
    Migration {
        version: 3,
        name: "the route of each key, the headers of each answer",
        sql: &[ROUTES_AND_HEADERS],
    },
    Migration {
        version: 4,
        name: "the key table's rows in insertion order, its primary key an index",
        sql: &[ROWS_IN_INSERTION_ORDER],
    },
];

/// The application's write of phase 3 on SQLite.
///
/// It runs on the writer connection, inside the savepoint that then stores
/// its [`Written`] response with the key and marks the key done: both commit
/// or neither does. It must not open a transaction (`BEGIN`) of its own, and
/// it runs on the writer's thread: keep it to SQL.
///
/// ```
/// use idemkey_axum::StoredResponse;
/// use idemkey_axum::sqlite::SqliteCommit;
/// use idemkey_axum::Written;
///
/// struct InsertOrder { id: String, amount: i64 }
///
/// impl SqliteCommit for InsertOrder {
///     fn write(self, conn: &rusqlite::Connection) -> rusqlite::Result<Written> {
///         conn.execute("INSERT INTO orders (id, amount) VALUES (?1, ?2)",
///             rusqlite::params![self.id, self.amount])?;
///         let body = format!(r#"{{"id":"{}"}}"#, self.id).into_bytes();
///         Ok(Written::response(StoredResponse::json(201, body)).with_record_id(self.id))
///     }
/// }
/// ```
pub trait SqliteCommit: Send + 'static {
    /// Writes the application's rows; returns what to store and send.
    fn write(self, conn: &Connection) -> rusqlite::Result<Written>;
}

/// [`KeyStore`] on one SQLite [`Database`], for any [`SqliteCommit`] write.
#[derive(Clone)]
pub struct SqliteKeys {
    db: Database,
    timing: Timing,
}

impl SqliteKeys {
    /// The key table of `db` (opened with [`MIGRATIONS`]), keys living and
    /// locks holding as `timing` says.
    pub fn new(db: Database, timing: Timing) -> SqliteKeys {
        SqliteKeys { db, timing }
    }

    /// The database the keys live in.
    pub fn database(&self) -> &Database {
        &self.db
    }
}

#[async_trait]
impl<W: SqliteCommit> KeyStore<W> for SqliteKeys {
    async fn lookup(&self, req: &KeyRequest) -> StoreResult<Lookup> {
        let (req, lock_ms) = (req.clone(), self.timing.lock_ms());
        self.db
            .read(move |conn| keys::lookup(conn, &req, now_ms(), lock_ms))
            .await
    }

    async fn reserve(&self, req: &KeyRequest) -> StoreResult<Reserved> {
        let (db, r, t) = (self.db.clone(), req.clone(), self.timing);
        let reserve = async move {
            db.write(move |conn| keys::reserve(conn, &r, now_ms(), t.ttl_ms(), t.lock_ms()))
                .await
        };
        reserve_to_the_end::<_, W, _, _>(self, req, proceeding, reserve).await
    }

    async fn reserve_new(&self, req: &KeyRequest) -> StoreResult<Option<Lock>> {
        let (db, r, ttl_ms) = (self.db.clone(), req.clone(), self.timing.ttl_ms());
        let reserve = async move {
            db.write(move |conn| keys::insert_new(conn, &r, now_ms(), ttl_ms))
                .await
        };
        reserve_to_the_end::<_, W, _, _>(self, req, |lock| lock, reserve).await
    }

    async fn hold(&self, req: &KeyRequest) -> StoreResult<Hold<W>> {
        let Some(holding) = self.db.holds().take(&req.customer, &req.key) else {
            return Ok(Hold::Answered(Lookup::InProgress));
        };
        let (r, lock_ms) = (req.clone(), self.timing.lock_ms());
        let found = self
            .db
            .read_here(move |conn| keys::held(conn, &r, now_ms(), lock_ms))
            .await?;
        Ok(match found {
            Some(found) => Hold::Answered(found),
            None => Hold::Proceed(Box::new(held::SqliteHeld {
                db: self.db.clone(),
                ttl_ms: self.timing.ttl_ms(),
                holding,
            })),
        })
    }

    async fn complete(
        &self,
        customer: &str,
        key: &str,
        lock: &Lock,
        write: W,
    ) -> StoreResult<Completed> {
        let (c, k, l) = (customer.to_string(), key.to_string(), lock.clone());
        self.db
            .write(move |conn| keys::complete(conn, &c, &k, &l, write))
            .await
    }

    async fn release(&self, customer: &str, key: &str, lock: &Lock) -> StoreResult<()> {
        let (c, k, o) = (customer.to_string(), key.to_string(), lock.owner.clone());
        self.db
            .write(move |conn| keys::release(conn, &c, &k, &o))
            .await
    }

    async fn stale_keys(&self, route: &str, limit: usize) -> StoreResult<Vec<StaleKey>> {
        let (route, lock_ms) = (route.to_string(), self.timing.lock_ms());
        self.db
            .read(move |conn| keys::stale(conn, &route, now_ms(), lock_ms, limit))
            .await
    }

    async fn take_over(&self, stale: &StaleKey) -> StoreResult<Option<Lock>> {
        let (k, t) = (stale.clone(), self.timing);
        self.db
            .write(move |conn| keys::take_over(conn, &k, now_ms(), t.ttl_ms(), t.lock_ms()))
            .await
    }

    async fn reap(&self) -> StoreResult<u64> {
        self.db.write(move |conn| keys::reap(conn, now_ms())).await
    }

    async fn forget(&self, stale: &StaleKey, lock: &Lock) -> StoreResult<bool> {
        let (k, owner) = (stale.clone(), lock.owner.clone());
        self.db
            .write(move |conn| keys::forget(conn, &k, &owner))
            .await
    }

    fn release_in_background(&self, customer: &str, key: &str, lock: &Lock) {
        let (db, c, k, o) = (
            self.db.clone(),
            customer.to_string(),
            key.to_string(),
            lock.owner.clone(),
        );
        spawn_release(async move { db.write(move |conn| keys::release(conn, &c, &k, &o)).await });
    }
}
