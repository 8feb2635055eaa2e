//! The embedded SQLite store (one file, WAL, `synchronous=FULL`).
//!
//! Writes go through one connection (SQLite admits one writer at a time);
//! look-ups and ledger reads use reader connections beside it, so replays,
//! 409s and 422s never queue behind a write.

pub mod connection;
pub mod idempotency_keys;
pub mod ledger;
pub mod migrate;
pub mod outbox;
pub mod provider_payments;
pub mod secrets;
pub mod writer;

use std::path::Path;

use async_trait::async_trait;

use self::connection::{Sqlite, SCHEMA};
use self::idempotency_keys as keys;
use crate::ids::now_ms;
use crate::store::migrations::Migration;
use crate::store::model::{
    Charge, Completed, KeyRequest, Lock, Lookup, Outcome, Reserved, StaleKey,
};
use crate::store::{Store, StoreError, StoreResult, Timing};

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        match e.sqlite_error_code() {
            // Another process held the file past the busy timeout.
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::Unavailable(e.to_string())
            }
            _ => StoreError::Failed(e.to_string()),
        }
    }
}

/// The SQLite store's schema, version by version.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0.1.0: keys, charges, outbox, processed events, receipts, secrets",
        sql: &[SCHEMA, outbox::SCHEMA, secrets::SCHEMA],
    },
    Migration {
        version: 2,
        name: "index of in-progress keys by lock age, for recovery's scan",
        sql: &[
            "CREATE INDEX IF NOT EXISTS idempotency_keys_stale ON idempotency_keys (locked_at)
                WHERE state = 'in_progress'",
        ],
    },
];

/// [`Store`] on one SQLite file.
pub struct SqliteStore {
    db: Sqlite,
    timing: Timing,
}

impl SqliteStore {
    /// Opens (creating if needed) the file and its directory.
    pub fn open(path: &Path, timing: Timing) -> Result<SqliteStore, String> {
        Ok(SqliteStore {
            db: Sqlite::open(path, "server", MIGRATIONS)?,
            timing,
        })
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn lookup(&self, req: &KeyRequest) -> StoreResult<Lookup> {
        let (req, lock_ms) = (req.clone(), self.timing.lock_ms());
        self.db
            .read(move |conn| keys::lookup(conn, &req, now_ms(), lock_ms))
            .await
    }

    async fn reserve(&self, req: &KeyRequest) -> StoreResult<Reserved> {
        let (req, t) = (req.clone(), self.timing);
        self.db
            .write(move |conn| keys::reserve(conn, &req, now_ms(), t.ttl_ms(), t.lock_ms()))
            .await
    }

    async fn complete(
        &self,
        customer: &str,
        key: &str,
        lock: &Lock,
        outcome: Outcome,
    ) -> StoreResult<Completed> {
        let (c, k, l) = (customer.to_string(), key.to_string(), lock.clone());
        self.db
            .write(move |conn| keys::complete(conn, &c, &k, &l, outcome))
            .await
    }

    async fn release(&self, customer: &str, key: &str, lock: &Lock) -> StoreResult<()> {
        let (c, k, o) = (customer.to_string(), key.to_string(), lock.owner.clone());
        self.db
            .write(move |conn| keys::release(conn, &c, &k, &o))
            .await
    }

    async fn stale_keys(&self, limit: usize) -> StoreResult<Vec<StaleKey>> {
        let lock_ms = self.timing.lock_ms();
        self.db
            .read(move |conn| keys::stale(conn, now_ms(), lock_ms, limit))
            .await
    }

    async fn take_over(&self, stale: &StaleKey) -> StoreResult<Option<Lock>> {
        let (k, lock_ms) = (stale.clone(), self.timing.lock_ms());
        self.db
            .write(move |conn| keys::take_over(conn, &k, now_ms(), lock_ms))
            .await
    }

    async fn reap(&self) -> StoreResult<u64> {
        let lock_ms = self.timing.lock_ms();
        self.db
            .write(move |conn| keys::reap(conn, now_ms(), lock_ms))
            .await
    }

    async fn insert_charge(&self, charge: &Charge) -> StoreResult<()> {
        let charge = charge.clone();
        self.db
            .write(move |conn| ledger::insert_alone(conn, &charge))
            .await
    }

    async fn charges(&self, customer: &str) -> StoreResult<Vec<Charge>> {
        let c = customer.to_string();
        self.db.read(move |conn| ledger::list(conn, &c)).await
    }

    async fn delete_customer(&self, customer: &str) -> StoreResult<(u64, u64)> {
        let c = customer.to_string();
        self.db
            .write(move |conn| ledger::delete_customer(conn, &c))
            .await
    }

    async fn secret(&self, name: &str, candidate: &[u8]) -> StoreResult<Vec<u8>> {
        let (n, c) = (name.to_string(), candidate.to_vec());
        self.db
            .write(move |conn| secrets::keep_first(conn, &n, &c))
            .await
    }
}
