//! Background upkeep: completion of dead operations (see `recovery`),
//! deletion of expired keys; idemkey-axum's reaper for the charge route.
//! On a shared database every instance runs one; they claim rows without
//! waiting for each other.

use std::time::Duration;

use idemkey_axum::Idempotency;

use crate::idem::recovery::FromProvider;
use crate::provider::Provider;
use crate::store::model::Outcome;

/// Runs forever, every `period`; the first tick is at once, so operations
/// left dead by a crash are completed right after a restart.
pub async fn run(idem: Idempotency<Outcome>, provider: Provider, period: Duration) {
    idem.reaper(FromProvider(provider), period).await
}
