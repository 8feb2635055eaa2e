//! Storage of keys, charges and stored responses, behind one interface.
//!
//! [`Store`] speaks the domain: reserve a key, complete it, release it, find
//! and take over stale ones, reap expired ones, read the ledger. It returns
//! [`model`] outcomes and [`StoreError`], never HTTP answers; no SQL type
//! crosses it. Two implementations: [`sqlite`] (embedded, the default) and
//! [`postgres`] (shared by many instances).

pub mod error;
pub mod migrations;
pub mod model;
pub mod postgres;

pub mod sqlite;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

pub use self::error::{StoreError, StoreResult};
use self::model::{Charge, Completed, KeyRequest, Lock, Lookup, Outcome, Reserved, StaleKey};

/// How long keys live and locks hold, on the store's own clock.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// `--key-ttl`: a key is a new operation this long after its first request.
    pub key_ttl: Duration,
    /// `--lock-timeout`: an in-progress key whose lock is older may be taken over.
    pub lock_timeout: Duration,
}

impl Timing {
    /// `key_ttl` in ms.
    pub fn ttl_ms(&self) -> i64 {
        self.key_ttl.as_millis() as i64
    }
    /// `lock_timeout` in ms.
    pub fn lock_ms(&self) -> i64 {
        self.lock_timeout.as_millis() as i64
    }
}

/// The idempotency store: one key per (customer, key), a lock while its
/// operation runs, the stored answer once done, and the charges.
///
/// Every method is one short transaction (or a plain read) and is safe to call
/// from many instances at once on a shared database: at most one caller ever
/// holds the lock of a key, and phase 3 commits only for the lock holder.
/// Times (lock ages, expiry) are the store's clock, not the caller's.
///
/// To extend it (say, an outbox written with the charge), add a method here
/// and implement it in `sqlite/` and `postgres/`; keep arguments and results
/// in [`model`] terms and errors in [`StoreError`].
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Read-only look-up of a key, never waiting for a writer or a row lock:
    /// replays, 409s and 422s are answered from it.
    async fn lookup(&self, req: &KeyRequest) -> StoreResult<Lookup>;

    /// Phase 1, atomic: reserves a new key (or an expired one) with a new
    /// operation id, takes over a stale one keeping its id, or reports why not.
    async fn reserve(&self, req: &KeyRequest) -> StoreResult<Reserved>;

    /// Phase 3, one transaction: the outcome (charge or answer), the stored
    /// response and the `done` state, only if `lock` still owns the key.
    async fn complete(
        &self,
        customer: &str,
        key: &str,
        lock: &Lock,
        outcome: Outcome,
    ) -> StoreResult<Completed>;

    /// Gives up a lock after a failure, so the next try takes over at once
    /// instead of after the lock timeout (the operation id is kept).
    async fn release(&self, customer: &str, key: &str, lock: &Lock) -> StoreResult<()>;

    /// In-progress keys whose lock is stale, oldest lock first, at most `limit`.
    async fn stale_keys(&self, limit: usize) -> StoreResult<Vec<StaleKey>>;

    /// Claims a stale key for server-side recovery: `None` when it is no
    /// longer that stale operation (a retry or another instance got it).
    async fn take_over(&self, stale: &StaleKey) -> StoreResult<Option<Lock>>;

    /// Deletes expired keys whose request is not running; returns how many.
    async fn reap(&self) -> StoreResult<u64>;

    /// A charge without a key, in its own transaction (the naive endpoint).
    async fn insert_charge(&self, charge: &Charge) -> StoreResult<()>;

    /// A customer's charges, oldest first.
    async fn charges(&self, customer: &str) -> StoreResult<Vec<Charge>>;

    /// Deletes a customer's charges and keys; returns how many of each.
    async fn delete_customer(&self, customer: &str) -> StoreResult<(u64, u64)>;

    /// The secret `name` shared by every instance on this store: the first
    /// one any of them offered, or `candidate`, stored now if none was.
    async fn secret(&self, name: &str, candidate: &[u8]) -> StoreResult<Vec<u8>>;
}

/// The store as handlers share it.
pub type SharedStore = Arc<dyn Store>;

#[cfg(test)]
mod contract_tests;
/// The tests' own PostgreSQL (shared with the integration tests).
#[cfg(test)]
#[path = "../../tests/common/pg.rs"]
pub mod test_pg;
