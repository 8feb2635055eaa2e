//! Storage of keys, charges and stored responses, behind one interface.
//!
//! [`Store`] speaks the domain: the key table (idemkey-axum's [`KeyStore`]:
//! reserve a key, complete it with a charge, release it, find and take over
//! stale ones, reap expired ones), the ledger, the shared secrets. It returns
//! [`model`] outcomes and [`StoreError`], never HTTP answers; no SQL type
//! crosses it. Two implementations: [`sqlite`] (embedded, the default) and
//! [`postgres`] (shared by many instances).

pub mod model;
pub mod postgres;

pub mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;

use self::model::{Charge, Outcome};
pub use idemkey_axum::KeyStore;
pub use idemkey_axum::{StoreError, StoreResult, Timing};

/// Versioned schema migrations, idemkey-axum's.
pub mod migrations {
    pub use idemkey_axum::Migration;
}

/// The server's store: its key table (the idemkey-axum crate's, whose phase 3
/// writes a charge: [`Outcome`]), its ledger, and the secrets instances share.
///
/// Every method is one short transaction (or a plain read) and is safe to call
/// from many instances at once on a shared database.
///
/// To extend it, add a method here and implement it in `sqlite/` and
/// `postgres/`; keep arguments and results in [`model`] terms and errors in
/// [`StoreError`].
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// The idempotency keys, on the same database: phase 3 commits a charge
    /// (and its outbox event) with the key.
    fn keys(&self) -> &dyn KeyStore<Outcome>;

    /// The same key table, as idemkey-axum's `Idempotency` holds it.
    fn shared_keys(&self) -> Arc<dyn KeyStore<Outcome>>;

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
