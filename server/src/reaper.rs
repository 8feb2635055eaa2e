//! Background deletion of expired keys.
//!
//! Expiry itself is enforced in phase 1 (an expired key is a new operation even
//! before the reaper ran); the reaper only keeps the table from growing forever.

use std::time::Duration;

use crate::ids::now_ms;
use crate::keys;
use crate::store::Store;

/// Runs forever, every `period`.
pub async fn run(store: Store, period: Duration, lock_timeout: Duration) {
    let lock_ms = lock_timeout.as_millis() as i64;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
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
