//! The embedded SQLite store (one file, WAL, `synchronous=FULL`).
//!
//! Writes go through one connection (SQLite admits one writer at a time);
//! look-ups and ledger reads use reader connections beside it, so replays,
//! 409s and 422s never queue behind a write. The key table is
//! idemkey-axum's ([`SqliteKeys`]) on the same file; phase 3's write is a
//! charge and its outbox event ([`Outcome`]'s [`SqliteCommit`]).

pub mod connection;
pub mod ledger;
pub mod outbox;
pub mod provider_payments;
pub mod secrets;

use std::path::Path;

use async_trait::async_trait;
use idemkey_axum::sqlite::{self as keys, SqliteCommit, SqliteKeys, KEYS_SCHEMA, STALE_INDEX};
use idemkey_axum::Written;
use rusqlite::Connection;

use self::connection::{Sqlite, SCHEMA};
use crate::store::migrations::Migration;
use crate::store::model::{Charge, Outcome};
use crate::store::{KeyStore, Store, StoreResult, Timing};

/// The SQLite store's schema, version by version.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0.1.0: keys, charges, outbox, processed events, receipts, secrets",
        sql: &[KEYS_SCHEMA, SCHEMA, outbox::SCHEMA, secrets::SCHEMA],
    },
    Migration {
        version: 2,
        name: "index of in-progress keys by lock age, for recovery's scan",
        sql: &[STALE_INDEX],
    },
];

/// Phase 3's write: the charge with its outbox event (a decline writes
/// nothing of its own), in the savepoint that stores the answer.
impl SqliteCommit for Outcome {
    fn write(self, conn: &Connection) -> rusqlite::Result<Written> {
        let (response, charge) = self.into_parts();
        let Some(charge) = charge else {
            return Ok(Written::response(response));
        };
        // UNIQUE(reservation): the last line of defence against a second
        // charge for one operation.
        if !ledger::insert(conn, &charge)? {
            return Ok(Written::already_recorded());
        }
        Ok(Written::response(response).with_record_id(charge.id))
    }
}

/// [`Store`] on one SQLite file.
pub struct SqliteStore {
    db: Sqlite,
    keys: SqliteKeys,
}

impl SqliteStore {
    /// Opens (creating if needed) the file and its directory.
    pub fn open(path: &Path, timing: Timing) -> Result<SqliteStore, String> {
        // The key table's own migrations, under the crate's scope, after the
        // server's (whose first version created the table 0.1.0 had).
        let db = Sqlite::open_with(
            path,
            &[("server", MIGRATIONS), (keys::SCOPE, keys::MIGRATIONS)],
        )
        .map_err(|e| e.to_string())?;
        Ok(SqliteStore {
            keys: SqliteKeys::new(db.clone(), timing),
            db,
        })
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn keys(&self) -> &dyn KeyStore<Outcome> {
        &self.keys
    }

    fn shared_keys(&self) -> std::sync::Arc<dyn KeyStore<Outcome>> {
        std::sync::Arc::new(self.keys.clone())
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
