//! Background upkeep: completion of dead operations, deletion of expired keys.
//!
//! Expiry itself is enforced in phase 1 (an expired key is a new operation even
//! before the reaper ran); deleting keys only keeps the table from growing
//! forever. Each tick first completes operations whose request died between
//! phases (see `recovery`), so that deleting an expired key never forgets a
//! payment the provider made. On a shared database every instance runs one;
//! they claim rows without waiting for each other.

use std::time::Duration;

use crate::idem::in_flight::InFlight;
use crate::idem::recovery;
use crate::provider::Provider;
use crate::store::SharedStore;

/// Runs forever, every `period`; the first tick is at once, so operations
/// left dead by a crash are completed right after a restart.
pub async fn run(store: SharedStore, provider: Provider, in_flight: InFlight, period: Duration) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        recovery::run_once(&*store, &provider, &in_flight).await;
        match store.reap().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "reaper deleted expired keys"),
            Err(e) => tracing::warn!(error = %e, "reaper failed; will retry"),
        }
    }
}
