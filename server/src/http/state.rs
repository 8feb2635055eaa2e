//! What every handler can reach.

use std::sync::Arc;

use crate::faults::Faults;
use idemkey_axum::Idempotency;

use crate::idem::fingerprint::Fingerprinter;
use crate::outbox::storage::OutboxStorage;
use crate::provider::Provider;
use crate::store::model::Outcome;
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
    /// The charge route's idempotency, idemkey-axum's: the key table of
    /// `store`, this instance's running keys and its cache of completed
    /// answers (off with `--faults`).
    pub idem: Idempotency<Outcome>,
    /// Payload fingerprints under the secret all instances share (the naive
    /// endpoint's faults match on them).
    pub fingerprints: Fingerprinter,
}
