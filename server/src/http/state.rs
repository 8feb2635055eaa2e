//! What every handler can reach.

use std::sync::Arc;

use crate::faults::Faults;
use crate::idem::fingerprint::Fingerprinter;
use crate::idem::in_flight::InFlight;
use crate::idem::replay_cache::ReplayCache;
use crate::outbox::storage::OutboxStorage;
use crate::provider::Provider;
use crate::store::SharedStore;

/// Everything a handler can reach; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The idempotency store (SQLite or PostgreSQL).
    pub store: SharedStore,
    /// The payment provider stand-in.
    pub provider: Provider,
    /// Scheduled faults (empty and inert without `--faults`).
    pub faults: Arc<Faults>,
    /// The outbox and the receipts (the same database as `store`).
    pub outbox: Arc<dyn OutboxStorage>,
    /// Keys this instance's requests are working on.
    pub in_flight: InFlight,
    /// Completed answers recently read from the store (off with `--faults`).
    pub replay_cache: ReplayCache,
    /// Payload fingerprints under the secret all instances share.
    pub fingerprints: Fingerprinter,
}
