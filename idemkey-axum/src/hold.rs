//! The one-commit mode's terms: a key held by a request without a durable
//! write, for a provider that deduplicates by the key it is given.
//!
//! The operation id is then derived from the request
//! ([`operation_id`](crate::implementers::operation_id)), so a retry after a
//! crash calls the provider under the same id and gets its first answer: the
//! key needs no row before the provider is called. What keeps two requests
//! of one key from running at once is a lock that costs no write (a
//! PostgreSQL advisory lock, this process's map of held keys on SQLite), and
//! the key's only durable commit is its answer, with the application's write.

use async_trait::async_trait;

use crate::model::{Completed, KeyRequest, Lookup};
use crate::store_error::StoreError;

/// What [`KeyStore::hold`](crate::KeyStore::hold) found.
pub enum Hold<W> {
    /// This request holds the key, which has no row (or an expired done
    /// one): it runs a new operation. Dropping the hold lets go of the key.
    Proceed(Box<dyn HeldKey<W>>),
    /// The key is not this request's to run: what its look-up answers,
    /// read while the key was held ([`Lookup::InProgress`] as well when
    /// another request holds it). [`Lookup::Free`] here is an unfinished
    /// operation of the two-commit mode (its lock went stale), which that
    /// mode takes over under its own operation id.
    Answered(Lookup),
}

/// A key this request holds without a durable write; dropping it lets go.
#[async_trait]
pub trait HeldKey<W>: Send + Sync {
    /// Phase 3: the application's `write`, the stored response and the key's
    /// row, done, under `operation_id`, in one transaction; the key is let go
    /// with it. A row that appeared meanwhile (a request of the two-commit
    /// mode) is answered as phase 3 of that mode answers it.
    async fn complete(
        self: Box<Self>,
        req: &KeyRequest,
        operation_id: &str,
        write: W,
    ) -> Result<Completed, StoreError>;
}
