//! Background upkeep: completion of dead operations, deletion of expired keys.
//!
//! Expiry itself is enforced in phase 1 (an expired key is a new operation even
//! before the reaper ran); deleting keys only keeps the table from growing
//! forever. Each tick first completes operations whose request died between
//! phases (see `recovery`), so that deleting an expired key never forgets a
//! payment the provider made.

use std::time::Duration;

use crate::idem::recovery;
use crate::ids::now_ms;
use crate::provider::Provider;
use crate::store::sqlite::connection::Store;
use crate::store::sqlite::idempotency_keys as keys;

/// Runs forever, every `period`; the first tick is at once, so operations
/// left dead by a crash are completed right after a restart.
pub async fn run(store: Store, provider: Provider, period: Duration, lock_timeout: Duration) {
    let lock_ms = lock_timeout.as_millis() as i64;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        recovery::run_once(&store, &provider, lock_timeout).await;
        match store
            .write(move |conn| keys::reap(conn, now_ms(), lock_ms))
            .await
        {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "reaper deleted expired keys"),
            Err(e) => tracing::warn!(error = %e, "reaper failed; will retry"),
        }
    }
}
