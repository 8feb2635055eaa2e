//! The PostgreSQL store, shared by many instances (`--database-url postgres://…`).
//!
//! Client: tokio-postgres with deadpool-postgres. tokio-postgres is the
//! plain async driver (no ORM, no compile-time database, no second SQLite
//! driver beside rusqlite), runs on the tokio the server already has, and
//! reports a closed connection and SQLSTATEs distinctly, which is what the
//! 503 mapping needs. deadpool-postgres adds a bounded pool with wait, create
//! and recycle timeouts, and per-connection prepared statement caches. sqlx
//! 0.9 would also do, but needs Rust 1.94 and brings its own SQLite driver.
//!
//! Bounded everywhere: at most [`POOL_SIZE`] connections, a caller waits at
//! most [`WAIT`] for one, and every store call gives up after [`OP_TIMEOUT`].
//! A database that is down, restarting or stuck is then
//! [`StoreError::Unavailable`] (503 with `Retry-After`), never a hang.

pub mod idempotency_keys;
pub mod ledger;
pub mod migrate;
pub mod outbox;
pub mod schema;
pub mod secrets;

use std::future::Future;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use self::idempotency_keys as keys;
use crate::store::migrations::Migration;
use crate::store::model::{
    Charge, Completed, KeyRequest, Lock, Lookup, Outcome, Reserved, StaleKey,
};
use crate::store::{Store, StoreError, StoreResult, Timing};

/// Most connections one instance opens.
pub const POOL_SIZE: usize = 16;
/// Longest wait for a pooled connection (and to open or check one).
const WAIT: Duration = Duration::from_secs(2);
/// Longest any store call may take.
const OP_TIMEOUT: Duration = Duration::from_secs(5);
/// Keys deleted per reaper statement.
const REAP_BATCH: i64 = 10_000;

impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> StoreError {
        let unavailable = e.is_closed()
            || match e.code() {
                // No SQLSTATE: I/O, a closed socket, a failed connect.
                None => true,
                Some(code) => {
                    let class = &code.code()[..2];
                    // 08 connection exception, 40 transaction rollback
                    // (deadlock, serialization: retryable), 53 insufficient
                    // resources, 57 operator intervention (shutdown, crash recovery).
                    matches!(class, "08" | "40" | "53" | "57")
                }
            };
        let msg = match e.as_db_error() {
            Some(db) => format!("{} ({})", db.message(), db.code().code()),
            None => e.to_string(),
        };
        if unavailable {
            StoreError::Unavailable(msg)
        } else {
            StoreError::Failed(msg)
        }
    }
}

impl From<PoolError> for StoreError {
    fn from(e: PoolError) -> StoreError {
        match e {
            PoolError::Backend(e) => e.into(),
            other => StoreError::Unavailable(other.to_string()),
        }
    }
}

/// The PostgreSQL store's schema, version by version.
pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "0.1.0: keys, charges, outbox, processed events, receipts, secrets",
    sql: &[schema::SCHEMA, outbox::SCHEMA, secrets::SCHEMA],
}];

/// [`Store`] on a PostgreSQL database.
pub struct PgStore {
    pool: Pool,
    timing: Timing,
}

impl PgStore {
    /// Connects (bounded pool) and brings the schema up to [`MIGRATIONS`].
    pub async fn connect(url: &str, timing: Timing) -> Result<PgStore, String> {
        let mut cfg =
            tokio_postgres::Config::from_str(url).map_err(|e| format!("--database-url: {e}"))?;
        cfg.connect_timeout(WAIT);
        if cfg.get_application_name().is_none() {
            cfg.application_name("idemkey-server");
        }
        let mgr = Manager::from_config(
            cfg,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(mgr)
            .max_size(POOL_SIZE)
            .wait_timeout(Some(WAIT))
            .create_timeout(Some(WAIT))
            .recycle_timeout(Some(WAIT))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| format!("database pool: {e}"))?;
        let store = PgStore { pool, timing };
        store
            .bounded(async {
                let mut c = store.pool.get().await?;
                migrate::migrate(&mut c, "server", MIGRATIONS).await
            })
            .await
            .map_err(|e| format!("cannot prepare the database: {e}"))?;
        Ok(store)
    }

    /// Runs `f` within [`OP_TIMEOUT`].
    async fn bounded<T>(&self, f: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
        match tokio::time::timeout(OP_TIMEOUT, f).await {
            Ok(r) => r,
            Err(_) => Err(StoreError::Unavailable(format!(
                "no answer from the database within {OP_TIMEOUT:?}"
            ))),
        }
    }
}

#[async_trait]
impl Store for PgStore {
    async fn lookup(&self, req: &KeyRequest) -> StoreResult<Lookup> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::lookup(&c, req, self.timing.lock_ms()).await
        })
        .await
    }

    async fn reserve(&self, req: &KeyRequest) -> StoreResult<Reserved> {
        let (ttl, lock) = (self.timing.ttl_ms(), self.timing.lock_ms());
        self.bounded(async {
            let mut c = self.pool.get().await?;
            // A row deleted between the two steps (reaper, reset) sends the
            // caller round again; the third time it is reported as busy.
            for _ in 0..3 {
                if let Some(lock) = keys::insert_new(&c, req, ttl).await? {
                    return Ok(Reserved::Proceed(lock));
                }
                // The key exists. A replay, a 422 or a 409 writes nothing, so
                // a plain read answers it, as the look-up does: requests
                // racing for one key do not queue on its row lock (holding
                // pooled connections while they wait). Only a write (a new
                // operation on an expired key, a takeover of a stale one)
                // locks the row and judges it again.
                match keys::lookup(&c, req, lock).await? {
                    Lookup::Replay { response, .. } => return Ok(Reserved::Replay(response)),
                    Lookup::KeyReused => return Ok(Reserved::KeyReused),
                    Lookup::InProgress => return Ok(Reserved::InProgress),
                    Lookup::Free => {}
                }
                let tx = c.transaction().await?;
                if let Some(r) = keys::reserve_existing(&tx, req, ttl, lock).await? {
                    tx.commit().await?;
                    return Ok(r);
                }
                tx.rollback().await?;
            }
            Ok(Reserved::InProgress)
        })
        .await
    }

    async fn complete(
        &self,
        customer: &str,
        key: &str,
        lock: &Lock,
        outcome: Outcome,
    ) -> StoreResult<Completed> {
        self.bounded(async {
            let mut c = self.pool.get().await?;
            let tx = c.transaction().await?;
            let done = keys::complete(&tx, customer, key, lock, outcome).await?;
            if matches!(done, Completed::Stored(_)) {
                tx.commit().await?;
            } else {
                tx.rollback().await?;
            }
            Ok(done)
        })
        .await
    }

    async fn release(&self, customer: &str, key: &str, lock: &Lock) -> StoreResult<()> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::release(&c, customer, key, &lock.owner).await
        })
        .await
    }

    async fn stale_keys(&self, limit: usize) -> StoreResult<Vec<StaleKey>> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::stale(&c, self.timing.lock_ms(), limit).await
        })
        .await
    }

    async fn take_over(&self, stale: &StaleKey) -> StoreResult<Option<Lock>> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::take_over(&c, stale, self.timing.lock_ms()).await
        })
        .await
    }

    async fn reap(&self) -> StoreResult<u64> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::reap(&c, self.timing.lock_ms(), REAP_BATCH).await
        })
        .await
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
