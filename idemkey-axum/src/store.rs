//! The key store's interface: what the phases ask of a database, in the
//! terms of [`model`](crate::model), whatever the database is.
//!
//! Two implementations: [`SqliteKeys`](crate::sqlite::SqliteKeys) and
//! [`PgKeys`](crate::postgres::PgKeys). `W` is the application's own write of
//! phase 3 (see [`SqliteCommit`](crate::sqlite::SqliteCommit) and
//! [`PgCommit`](crate::postgres::PgCommit)): the store runs it in the same
//! transaction that stores the response and marks the key done.

use std::marker::PhantomData;
use std::time::Duration;

use async_trait::async_trait;

use crate::error::Error;
use crate::hold::Hold;
use crate::model::{Completed, KeyRequest, Lock, Lookup, Reserved, StaleKey, StoredResponse};

pub use crate::store_error::{Cause, StoreError};

/// Result alias of the store.
pub type StoreResult<T> = Result<T, StoreError>;

/// How long keys live and locks hold, on the store's own clock.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    key_ttl: Duration,
    lock_timeout: Duration,
}

impl Default for Timing {
    /// 24 hours and 30 seconds.
    fn default() -> Timing {
        Timing {
            key_ttl: Duration::from_secs(86_400),
            lock_timeout: Duration::from_secs(30),
        }
    }
}

/// Longest TTL or lock timeout [`Timing::new`] takes: times are kept in
/// milliseconds on the store's clock, with room to add them to it.
pub const MAX_DURATION: Duration = Duration::from_secs(100 * 365 * 86_400);

/// How many lock timeouts a key's TTL lasts at least ([`Timing::new`]).
pub const TTL_PER_LOCK_TIMEOUT: u32 = 10;

impl Timing {
    /// A TTL and a lock timeout, each from 1 ms to [`MAX_DURATION`], the
    /// TTL at least [`TTL_PER_LOCK_TIMEOUT`] lock timeouts; an error says
    /// which is wrong.
    ///
    /// A zero lock timeout would let every request take over a key whose
    /// first request is still running. A done key's retry after the TTL is a
    /// new operation, so the TTL must outlast by far the time a client keeps
    /// retrying, which starts after a lock went stale.
    pub fn new(key_ttl: Duration, lock_timeout: Duration) -> Result<Timing, Error> {
        for (name, d) in [("key TTL", key_ttl), ("lock timeout", lock_timeout)] {
            if d < Duration::from_millis(1) || d > MAX_DURATION {
                return Err(Error::InvalidSetting(format!(
                    "the {name} must be from 1 ms to 100 years, not {d:?}"
                )));
            }
        }
        if key_ttl < lock_timeout * TTL_PER_LOCK_TIMEOUT {
            return Err(Error::InvalidSetting(format!(
                "the key TTL ({key_ttl:?}) must be at least {TTL_PER_LOCK_TIMEOUT} times \
                 the lock timeout ({lock_timeout:?})"
            )));
        }
        Ok(Timing {
            key_ttl,
            lock_timeout,
        })
    }

    /// A key is a new operation this long after its first request, once
    /// done (its TTL).
    pub fn key_ttl(&self) -> Duration {
        self.key_ttl
    }

    /// An in-progress key whose lock is older may be taken over: by a retry,
    /// or by recovery. Longer than the slowest phase 2 you expect.
    pub fn lock_timeout(&self) -> Duration {
        self.lock_timeout
    }

    /// `key_ttl` in ms.
    pub(crate) fn ttl_ms(&self) -> i64 {
        self.key_ttl.as_millis() as i64
    }
    /// `lock_timeout` in ms.
    pub(crate) fn lock_ms(&self) -> i64 {
        self.lock_timeout.as_millis() as i64
    }
}

/// What the application's write of phase 3 hands back: the response to store
/// with the key (and to send), or word that its own records already hold this
/// operation, in which case nothing of the transaction is kept.
#[derive(Debug, Clone)]
pub struct Written {
    pub(crate) response: Option<StoredResponse>,
    pub(crate) record_id: Option<String>,
}

impl Written {
    /// Store `response` with the key and send it; every replay sends it again,
    /// byte for byte.
    pub fn response(response: StoredResponse) -> Written {
        Written {
            response: Some(response),
            record_id: None,
        }
    }

    /// Keeps `id` (the row the write created, say an order id) with the key,
    /// for whoever reads the key table.
    pub fn with_record_id(mut self, id: impl Into<String>) -> Written {
        self.record_id = Some(id.into());
        self
    }

    /// The application's own uniqueness check (a `UNIQUE` column on the
    /// operation id) found this operation already recorded: the transaction
    /// is rolled back and the request answered `409` (another request of the
    /// operation holds or held it). A last line of defence; the key's lock
    /// normally makes it unreachable.
    pub fn already_recorded() -> Written {
        Written {
            response: None,
            record_id: None,
        }
    }
}

/// The idempotency key store: one row per (principal, key), a lock while its
/// operation runs, the stored answer once done.
///
/// Every method is one short transaction (or a plain read) and is safe to call
/// from many instances at once on a shared database: at most one caller ever
/// holds the lock of a key, and phase 3 commits only for the lock holder.
/// Times (lock ages, expiry) are the store's clock, not the caller's.
#[async_trait]
pub trait KeyStore<W: Send + 'static>: Send + Sync + 'static {
    /// Read-only look-up of a key, never waiting for a writer or a row lock:
    /// replays, 409s and 422s are answered from it.
    async fn lookup(&self, req: &KeyRequest) -> StoreResult<Lookup>;

    /// Phase 1, atomic: reserves a new key (or an expired one) with a new
    /// operation id, takes over a stale one keeping its id, or reports why not.
    ///
    /// Dropping the returned future (a client that hung up) must not leave a
    /// lock that nobody holds: the database may commit a reservation its
    /// caller never hears of. Both stores here run it to its end on a task of
    /// their own and release a lock nobody waits for; so does their
    /// [`KeyStore::reserve_new`].
    async fn reserve(&self, req: &KeyRequest) -> StoreResult<Reserved>;

    /// Phase 1 for a key that has no row, tried before the look-up: `Some`
    /// when this call reserved it, `None` when the key has a row (or the
    /// store does not try: the default), and the request goes on to the
    /// look-up and [`KeyStore::reserve`]. A store whose reservation of a new
    /// key is one statement implements it: a new key then costs that
    /// statement alone instead of a read and then a write. A key that has a
    /// row costs the statement more, before its look-up (on SQLite, a turn on
    /// the writer); replays are answered from the cache of completed answers
    /// before either, after the first.
    async fn reserve_new(&self, req: &KeyRequest) -> StoreResult<Option<Lock>> {
        let _ = req;
        Ok(None)
    }

    /// The one-commit mode's phase 1 (see
    /// [`Idempotency::provider_deduplicates`](crate::Idempotency::provider_deduplicates)):
    /// holds the key for this request with a lock that costs no durable
    /// write, then reads its row, and says whether the request runs a new
    /// operation. A key another request holds is
    /// [`Lookup::InProgress`]. Like [`KeyStore::reserve`], a hold whose
    /// caller is gone must be let go. The default refuses: a store of your
    /// own that has no such lock keeps the two-commit mode.
    async fn hold(&self, req: &KeyRequest) -> StoreResult<Hold<W>> {
        let _ = req;
        Err(StoreError::failed(
            "this key store cannot hold a key without a write (KeyStore::hold); \
             keep the two-commit mode",
        ))
    }

    /// Phase 3, one transaction: the application's `write`, the stored
    /// response and the `done` state, only if `lock` still owns the key.
    async fn complete(
        &self,
        customer: &str,
        key: &str,
        lock: &Lock,
        write: W,
    ) -> StoreResult<Completed>;

    /// Gives up a lock after a failure, so the next try takes over at once
    /// instead of after the lock timeout (the operation id is kept).
    async fn release(&self, customer: &str, key: &str, lock: &Lock) -> StoreResult<()>;

    /// `route`'s in-progress keys whose lock is stale, oldest lock first, at
    /// most `limit`.
    async fn stale_keys(&self, route: &str, limit: usize) -> StoreResult<Vec<StaleKey>>;

    /// Claims a stale key for recovery: `None` when it is no longer that
    /// stale operation (a retry or another instance got it). Like a takeover
    /// by a retry, it keeps the key at least one TTL from now.
    async fn take_over(&self, stale: &StaleKey) -> StoreResult<Option<Lock>>;

    /// Deletes `stale`, whose operation recovery learned never reached the
    /// provider, while `lock` (recovery's, from [`KeyStore::take_over`])
    /// still holds it; `true` when it did.
    async fn forget(&self, stale: &StaleKey, lock: &Lock) -> StoreResult<bool>;

    /// Deletes expired keys whose operation is done; returns how many.
    /// Unfinished operations are never deleted here, however old.
    async fn reap(&self) -> StoreResult<u64>;

    /// [`KeyStore::release`] on a task of its own, from code that cannot
    /// wait (a dropped [`Operation`](crate::Operation)); best effort. The
    /// default does nothing: the lock then frees itself after the lock
    /// timeout.
    fn release_in_background(&self, customer: &str, key: &str, lock: &Lock) {
        let _ = (customer, key, lock);
    }
}

/// Runs `reserve`, phase 1 on `store` for `req`, to its end on a task of its
/// own, and returns its outcome.
///
/// A caller dropped meanwhile (axum drops the handler of a client that hung
/// up, at its `.await`; a timeout around the call) must not stop it half-way:
/// the database may commit the reservation all the same, and with no request
/// to release it the key would answer 409 until the lock timeout. So the
/// reservation always ends, and a lock it got that the caller never takes
/// (`lock_of` its outcome) is released at once, as a dropped
/// [`Operation`](crate::Operation)'s is. Outside a tokio runtime it runs in
/// place.
pub(crate) async fn reserve_to_the_end<S, W, T, F>(
    store: &S,
    req: &KeyRequest,
    lock_of: fn(T) -> Option<Lock>,
    reserve: F,
) -> StoreResult<T>
where
    S: KeyStore<W> + Clone,
    W: Send + 'static,
    T: Send + 'static,
    F: std::future::Future<Output = StoreResult<T>> + Send + 'static,
{
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return reserve.await;
    };
    let mut outcome = Unclaimed {
        outcome: None,
        store: store.clone(),
        customer: req.customer.clone(),
        key: req.key.clone(),
        lock_of,
        write: PhantomData,
    };
    let (answer, answered) = tokio::sync::oneshot::channel();
    rt.spawn(async move {
        outcome.outcome = Some(reserve.await);
        // Refused (the caller is gone), it is dropped here; taken, it is dropped
        // with the receiver if the caller goes before reading it.
        let _ = answer.send(outcome);
    });
    match answered.await {
        Ok(outcome) => outcome.claim(),
        Err(_) => Err(StoreError::failed(
            "the reservation's task stopped before its end",
        )),
    }
}

/// A reservation's outcome on its way to its caller: dropped unclaimed, it
/// releases the lock it holds.
struct Unclaimed<S: KeyStore<W>, W: Send + 'static, T> {
    /// `None` until the reservation ends, and once claimed.
    outcome: Option<StoreResult<T>>,
    /// The store that releases the lock, with the key's principal and name.
    store: S,
    customer: String,
    key: String,
    /// The lock an outcome holds, if any.
    lock_of: fn(T) -> Option<Lock>,
    /// The store's phase 3 write, which names the `KeyStore` it is.
    write: PhantomData<fn() -> W>,
}

impl<S: KeyStore<W>, W: Send + 'static, T> Unclaimed<S, W, T> {
    /// The outcome, now the caller's.
    fn claim(mut self) -> StoreResult<T> {
        self.outcome
            .take()
            .unwrap_or_else(|| Err(StoreError::failed("the reservation ended with no outcome")))
    }
}

impl<S: KeyStore<W>, W: Send + 'static, T> Drop for Unclaimed<S, W, T> {
    fn drop(&mut self) {
        if let Some(lock) = self
            .outcome
            .take()
            .and_then(Result::ok)
            .and_then(self.lock_of)
        {
            self.store
                .release_in_background(&self.customer, &self.key, &lock);
        }
    }
}

/// The lock of a reservation that proceeds.
pub(crate) fn proceeding(reserved: Reserved) -> Option<Lock> {
    match reserved {
        Reserved::Proceed(lock) => Some(lock),
        _ => None,
    }
}

/// Runs `release` on the current tokio runtime, logging its failure; does
/// nothing outside a runtime.
pub(crate) fn spawn_release<F>(release: F)
where
    F: std::future::Future<Output = StoreResult<()>> + Send + 'static,
{
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move {
            if let Err(e) = release.await {
                tracing::warn!(error = %e, "could not release the key of a dropped operation; it frees itself after the lock timeout");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ttl_not_far_longer_than_the_lock_timeout_is_refused() {
        // A retry after the TTL of a done key is a new operation: the TTL
        // must leave the client its retries long after a lock went stale.
        let lock = Duration::from_secs(30);
        assert!(Timing::new(lock, lock).is_err());
        assert!(Timing::new(lock * 9, lock).is_err());
        assert!(Timing::new(lock * 10, lock).is_ok());
    }

    #[test]
    fn a_timing_out_of_range_is_refused_and_says_which() {
        let s = Duration::from_secs(1);
        assert!(Timing::new(s * 10, s).is_ok());
        let e = Timing::new(Duration::ZERO, s).unwrap_err().to_string();
        assert!(e.contains("key TTL"), "{e}");
        let e = Timing::new(s, Duration::from_micros(999))
            .unwrap_err()
            .to_string();
        assert!(e.contains("lock timeout"), "{e}");
        assert!(Timing::new(MAX_DURATION, MAX_DURATION / 10).is_ok());
        let e = Timing::new(s, MAX_DURATION + s).unwrap_err().to_string();
        assert!(e.contains("lock timeout"), "{e}");
    }
}
