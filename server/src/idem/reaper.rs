//! Background upkeep: completion of dead operations (see `recovery`),
//! deletion of expired keys; idemkey-axum's reaper on the server's store.
//! On a shared database every instance runs one; they claim rows without
//! waiting for each other.

use std::time::Duration;

use idemkey_axum::recovery;

use crate::idem::in_flight::InFlight;
use crate::idem::recovery::FromProvider;
use crate::provider::Provider;
use crate::store::SharedStore;

/// Runs forever, every `period`; the first tick is at once, so operations
/// left dead by a crash are completed right after a restart.
pub async fn run(store: SharedStore, provider: Provider, in_flight: InFlight, period: Duration) {
    recovery::reaper(store.keys(), &FromProvider(&provider), &in_flight, period).await
}
