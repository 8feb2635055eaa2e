//! The PostgreSQL store, shared by many instances (`--database-url postgres://…`).
//!
//! Client: tokio-postgres with deadpool-postgres, bounded as idemkey-axum's
//! [`pool`] and [`bounded`] are (see there why these two). sqlx 0.9 would
//! also do, but needs Rust 1.94 and brings its own SQLite driver. The key
//! table is idemkey-axum's ([`PgKeys`]) on the same pool; phase 3's write is
//! a charge and its outbox event ([`Outcome`]'s [`PgCommit`]).

pub mod ledger;
pub mod outbox;
pub mod schema;
pub mod secrets;

use std::str::FromStr;

use async_trait::async_trait;
use deadpool_postgres::Pool;
use idemkey_axum::postgres::{bounded, migrate, pool, PgCommit, PgKeys};
use idemkey_axum::Written;

use crate::store::migrations::Migration;
use crate::store::model::{Charge, Outcome};
use crate::store::{KeyStore, Store, StoreResult, Timing};

pub use idemkey_axum::postgres::POOL_SIZE;

/// The PostgreSQL store's schema, version by version.
pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "0.1.0: keys, charges, outbox, processed events, receipts, secrets",
    sql: &[
        idemkey_axum::postgres::schema::KEYS_SCHEMA,
        schema::SCHEMA,
        outbox::SCHEMA,
        secrets::SCHEMA,
    ],
}];

/// Phase 3's write: the charge with its outbox event (a decline writes
/// nothing of its own), in the transaction that stores the answer.
#[async_trait]
impl PgCommit for Outcome {
    async fn write<C: deadpool_postgres::GenericClient>(self, client: &C) -> StoreResult<Written> {
        let (response, charge) = self.into_parts();
        let Some(charge) = charge else {
            return Ok(Written::response(response));
        };
        // UNIQUE(reservation): the last line of defence against a second
        // charge for one operation.
        if !ledger::insert(client, &charge).await? {
            return Ok(Written::already_recorded());
        }
        Ok(Written::response(response).with_record_id(charge.id))
    }
}

/// [`Store`] on a PostgreSQL database.
pub struct PgStore {
    pool: Pool,
    keys: PgKeys,
}

impl PgStore {
    /// Connects (bounded pool) and brings the schema up to [`MIGRATIONS`].
    pub async fn connect(url: &str, timing: Timing) -> Result<PgStore, String> {
        let mut cfg =
            tokio_postgres::Config::from_str(url).map_err(|e| format!("--database-url: {e}"))?;
        if cfg.get_application_name().is_none() {
            cfg.application_name("idemkey-server");
        }
        let pool = pool(cfg).map_err(|e| e.to_string())?;
        bounded(async {
            let mut c = pool.get().await?;
            migrate(&mut c, "server", MIGRATIONS).await?;
            // The key table's own migrations, under the crate's scope, after
            // the server's (whose first version created the table 0.1.0 had).
            migrate(
                &mut c,
                idemkey_axum::postgres::SCOPE,
                idemkey_axum::postgres::MIGRATIONS,
            )
            .await
        })
        .await
        .map_err(|e| format!("cannot prepare the database: {e}"))?;
        Ok(PgStore {
            keys: PgKeys::new(pool.clone(), timing),
            pool,
        })
    }

    /// Runs `f` within the crate's time bound.
    async fn bounded<T>(
        &self,
        f: impl std::future::Future<Output = StoreResult<T>>,
    ) -> StoreResult<T> {
        bounded(f).await
    }
}

#[async_trait]
impl Store for PgStore {
    fn keys(&self) -> &dyn KeyStore<Outcome> {
        &self.keys
    }

    fn shared_keys(&self) -> std::sync::Arc<dyn KeyStore<Outcome>> {
        std::sync::Arc::new(self.keys.clone())
    }

    async fn insert_charge(&self, charge: &Charge) -> StoreResult<()> {
        self.bounded(async {
            let mut c = self.pool.get().await?;
            let tx = c.transaction().await?;
            ledger::insert(&tx, charge).await?;
            tx.commit().await?;
            Ok(())
        })
        .await
    }

    async fn charges(&self, customer: &str) -> StoreResult<Vec<Charge>> {
        self.bounded(async {
            let c = self.pool.get().await?;
            ledger::list(&c, customer).await
        })
        .await
    }

    async fn delete_customer(&self, customer: &str) -> StoreResult<(u64, u64)> {
        self.bounded(async {
            let mut c = self.pool.get().await?;
            let tx = c.transaction().await?;
            let n = ledger::delete_customer(&tx, customer).await?;
            tx.commit().await?;
            Ok(n)
        })
        .await
    }

    async fn secret(&self, name: &str, candidate: &[u8]) -> StoreResult<Vec<u8>> {
        self.bounded(async {
            let c = self.pool.get().await?;
            secrets::keep_first(&c, name, candidate).await
        })
        .await
    }
}
