//! The key store on PostgreSQL, shared by many instances.
//!
//! Client: tokio-postgres with deadpool-postgres. tokio-postgres is the
//! plain async driver (no ORM, no compile-time database), runs on tokio, and
//! reports a closed connection and SQLSTATEs distinctly, which is what the
//! 503 mapping needs. deadpool-postgres adds a bounded pool with wait, create
//! and recycle timeouts, and per-connection prepared statement caches.
//!
//! Bounded everywhere ([`PgSettings`], defaults below): [`pool`] opens at
//! most [`POOL_SIZE`] connections, a caller waits at most [`WAIT`] for one,
//! every store call gives up after [`OP_TIMEOUT`] ([`bounded`]), and the
//! database itself cancels any statement after [`STATEMENT_TIMEOUT`], so a
//! statement whose caller gave up does not run on in a connection back in
//! the pool. A database that is down, restarting or stuck is then
//! [`StoreError::Unavailable`] (503 with `Retry-After`), never a hang.
//!
//! In the one-commit mode a running operation holds one pooled connection
//! from phase 1 to phase 3 (its transaction's advisory lock is the key's
//! lock), for the lock timeout at most: size the pool for the operations in
//! flight.

mod begun;
mod held;
mod keys;
mod migrate;
pub mod schema;
mod settings;

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{
    GenericClient, Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime,
};
use tokio_postgres::NoTls;

use self::begun::Begun;
pub use self::migrate::migrate;
pub use self::settings::PgSettings;
use crate::error::Error;
use crate::hold::Hold;
use crate::migrations::Migration;
use crate::model::{Completed, KeyRequest, Lock, Lookup, Reserved, StaleKey};
use crate::store::{
    proceeding, reserve_to_the_end, spawn_release, Cause, KeyStore, StoreError, StoreResult,
    Timing, Written,
};

/// Most connections [`pool`] opens.
pub const POOL_SIZE: usize = 16;
/// Longest wait for a pooled connection (and to open or check one).
pub const WAIT: Duration = Duration::from_secs(2);
/// Longest any store call may take.
pub const OP_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest any statement runs before the database cancels it.
pub const STATEMENT_TIMEOUT: Duration = OP_TIMEOUT;

/// Keys deleted per reaper statement.
const REAP_BATCH: i64 = 10_000;

/// The scope the key table's migrations are recorded under.
pub const SCOPE: &str = "idemkey";

/// The key table's schema, version by version (scope [`SCOPE`]).
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "idempotency keys",
        sql: &[schema::KEYS_SCHEMA],
    },
    Migration {
        version: 2,
        name: "the route of each key, the headers of each answer",
        sql: &[schema::ROUTES_AND_HEADERS],
    },
    Migration {
        version: 3,
        name: "the key table without the check of its state, built again for every write",
        sql: &[schema::NO_STATE_CHECK],
    },
];

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
        let message = match e.as_db_error() {
            Some(db) => format!("{} ({})", db.message(), db.code().code()),
            None => e.to_string(),
        };
        let source: Option<Cause> = Some(std::sync::Arc::new(e));
        if unavailable {
            StoreError::Unavailable { message, source }
        } else {
            StoreError::Failed { message, source }
        }
    }
}

impl From<PoolError> for StoreError {
    fn from(e: PoolError) -> StoreError {
        match e {
            PoolError::Backend(e) => e.into(),
            other => StoreError::Unavailable {
                message: other.to_string(),
                source: Some(std::sync::Arc::new(other)),
            },
        }
    }
}

/// A bounded pool for `cfg` (say `Config::from_str("postgres://USER@HOST:PORT/DB")`)
/// with [`PgSettings::default`]: at most [`POOL_SIZE`] connections, made on
/// first use; a caller waits at most [`WAIT`] for one, to connect included;
/// statements are cancelled after [`STATEMENT_TIMEOUT`].
pub fn pool(cfg: tokio_postgres::Config) -> Result<Pool, Error> {
    pool_with(cfg, PgSettings::default())
}

/// [`pool`] bounded by `settings`; an error names a setting out of range.
pub fn pool_with(mut cfg: tokio_postgres::Config, settings: PgSettings) -> Result<Pool, Error> {
    settings.check()?;
    let limit = format!(
        "-c statement_timeout={}",
        settings.statement_timeout.as_millis()
    );
    let options = match cfg.get_options() {
        Some(o) if !o.is_empty() => format!("{o} {limit}"),
        _ => limit,
    };
    cfg.options(&options);
    cfg.connect_timeout(settings.wait);
    let mgr = Manager::from_config(
        cfg,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(mgr)
        .max_size(settings.max_connections)
        .wait_timeout(Some(settings.wait))
        .create_timeout(Some(settings.wait))
        .recycle_timeout(Some(settings.wait))
        .runtime(Runtime::Tokio1)
        .build()
        .map_err(|e| Error::InvalidSetting(format!("database pool: {e}")))
}

/// Runs `f` within [`OP_TIMEOUT`]; later is [`StoreError::Unavailable`].
pub async fn bounded<T>(f: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
    bounded_by(OP_TIMEOUT, f).await
}

/// Runs `f` within `limit`; later is [`StoreError::Unavailable`].
async fn bounded_by<T>(limit: Duration, f: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
    match tokio::time::timeout(limit, f).await {
        Ok(r) => r,
        Err(_) => Err(StoreError::unavailable(format!(
            "no answer from the database within {limit:?}"
        ))),
    }
}

/// The application's write of phase 3 on PostgreSQL.
///
/// It runs on `client`, inside the transaction that then stores its
/// [`Written`] response with the key and marks the key done: both commit or
/// neither does. It must not begin, commit or roll back a transaction. The
/// crate passes a pooled [`deadpool_postgres::Client`] whose transaction it
/// began with a plain `BEGIN` (so that `BEGIN` and `COMMIT` share round
/// trips with its own statements); being generic over
/// [`GenericClient`](deadpool_postgres::GenericClient), the same write also
/// runs in a [`deadpool_postgres::Transaction`] of the application's own.
///
/// ```
/// use async_trait::async_trait;
/// use deadpool_postgres::GenericClient;
/// use idemkey_axum::StoredResponse;
/// use idemkey_axum::postgres::PgCommit;
/// use idemkey_axum::{StoreResult, Written};
///
/// struct InsertOrder { id: String, amount: i64 }
///
/// #[async_trait]
/// impl PgCommit for InsertOrder {
///     async fn write<C: GenericClient>(self, client: &C) -> StoreResult<Written> {
///         client.execute("INSERT INTO orders (id, amount) VALUES ($1, $2)",
///             &[&self.id, &self.amount]).await?;
///         let body = format!(r#"{{"id":"{}"}}"#, self.id).into_bytes();
///         Ok(Written::response(StoredResponse::json(201, body)).with_record_id(self.id))
///     }
/// }
/// ```
#[async_trait]
pub trait PgCommit: Send + 'static {
    /// Writes the application's rows on `client`, in the transaction;
    /// returns what to store and send.
    async fn write<C: GenericClient>(self, client: &C) -> StoreResult<Written>;
}

/// [`KeyStore`] on a PostgreSQL pool, for any [`PgCommit`] write.
#[derive(Clone)]
pub struct PgKeys {
    pool: Pool,
    timing: Timing,
    op_timeout: Duration,
}

impl PgKeys {
    /// The key table of `pool`'s database (migrated with [`MIGRATIONS`]),
    /// keys living and locks holding as `timing` says.
    pub fn new(pool: Pool, timing: Timing) -> PgKeys {
        PgKeys {
            pool,
            timing,
            op_timeout: OP_TIMEOUT,
        }
    }

    /// The same, every store call bounded by `settings.op_timeout` (give it
    /// the settings its pool was made with).
    pub fn with_settings(mut self, settings: PgSettings) -> PgKeys {
        self.op_timeout = settings.op_timeout;
        self
    }

    /// Runs `f` within this store's op timeout.
    async fn bounded<T>(&self, f: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
        bounded_by(self.op_timeout, f).await
    }

    /// The pool the keys live in.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Phase 1 ([`KeyStore::reserve`]), run to its end whatever its caller
    /// does (the caller's wait is bounded, not this).
    async fn reserve_key(&self, req: &KeyRequest) -> StoreResult<Reserved> {
        let (ttl, lock) = (self.timing.ttl_ms(), self.timing.lock_ms());
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
    }
}

#[async_trait]
impl<W: PgCommit> KeyStore<W> for PgKeys {
    async fn lookup(&self, req: &KeyRequest) -> StoreResult<Lookup> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::lookup(&c, req, self.timing.lock_ms()).await
        })
        .await
    }

    async fn reserve(&self, req: &KeyRequest) -> StoreResult<Reserved> {
        let (me, r) = (self.clone(), req.clone());
        let reserve = async move { me.reserve_key(&r).await };
        self.bounded(reserve_to_the_end::<_, W, _, _>(
            self, req, proceeding, reserve,
        ))
        .await
    }

    async fn reserve_new(&self, req: &KeyRequest) -> StoreResult<Option<Lock>> {
        let (pool, r, ttl) = (self.pool.clone(), req.clone(), self.timing.ttl_ms());
        let reserve = async move { keys::insert_new(&pool.get().await?, &r, ttl).await };
        self.bounded(reserve_to_the_end::<_, W, _, _>(
            self,
            req,
            |lock| lock,
            reserve,
        ))
        .await
    }

    async fn hold(&self, req: &KeyRequest) -> StoreResult<Hold<W>> {
        held::hold(self.pool.clone(), req.clone(), self.timing, self.op_timeout).await
    }

    async fn complete(
        &self,
        customer: &str,
        key: &str,
        lock: &Lock,
        write: W,
    ) -> StoreResult<Completed> {
        self.bounded(async {
            let mut tx = Begun::new(self.pool.get().await?);
            tx.client().batch_execute("BEGIN").await?;
            let done = match keys::complete(tx.client(), customer, key, lock, write).await {
                Ok(done) => done,
                Err(e) => {
                    let _ = tx.end("ROLLBACK").await;
                    return Err(e);
                }
            };
            let end = match done {
                Completed::Stored(_) => "COMMIT",
                _ => "ROLLBACK",
            };
            tx.end(end).await?;
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

    async fn stale_keys(&self, route: &str, limit: usize) -> StoreResult<Vec<StaleKey>> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::stale(&c, route, self.timing.lock_ms(), limit).await
        })
        .await
    }

    async fn take_over(&self, stale: &StaleKey) -> StoreResult<Option<Lock>> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::take_over(&c, stale, self.timing.ttl_ms(), self.timing.lock_ms()).await
        })
        .await
    }

    async fn forget(&self, stale: &StaleKey, lock: &Lock) -> StoreResult<bool> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::forget(&c, stale, &lock.owner).await
        })
        .await
    }

    async fn reap(&self) -> StoreResult<u64> {
        self.bounded(async {
            let c = self.pool.get().await?;
            keys::reap(&c, REAP_BATCH).await
        })
        .await
    }

    fn release_in_background(&self, customer: &str, key: &str, lock: &Lock) {
        let (pool, c, k, o) = (
            self.pool.clone(),
            customer.to_string(),
            key.to_string(),
            lock.owner.clone(),
        );
        spawn_release(bounded_by(self.op_timeout, async move {
            let conn = pool.get().await?;
            keys::release(&conn, &c, &k, &o).await
        }));
    }
}
