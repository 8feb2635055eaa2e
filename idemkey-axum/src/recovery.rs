//! Completion of operations whose request died between phases, and the
//! reaper that runs it and deletes expired keys.
//!
//! A retry with the same key recovers such an operation (phase 1 takes over a
//! stale lock). A client that never comes back would leave the key
//! `in_progress` for good, and if the provider had already been paid, that
//! payment would be missing from the application's records, with nothing to
//! reconcile it against once the reaper deleted the expired key. So every
//! reaper tick also finishes them: for each key whose lock is older than the
//! lock timeout, the application's [`Recover`] asks the provider what it did
//! under that operation id (a lookup, never a new call). If it did something,
//! recovery takes the lock over and phase 3 commits exactly what the request
//! would have; a later retry gets it as a replay. If it did nothing, the key
//! is left alone for its retry or its expiry.
//!
//! Expiry itself is enforced in phase 1 (an expired key is a new operation
//! even before the reaper ran); deleting keys only keeps the table from
//! growing forever. On a shared database every instance runs a reaper; they
//! claim rows without waiting for each other.

use std::time::Duration;

use async_trait::async_trait;

use crate::in_flight::InFlight;
use crate::model::{Completed, StaleKey};
use crate::phases;
use crate::store::KeyStore;

/// Stale keys looked at per tick; the rest wait for the next one.
const BATCH: usize = 500;

/// How an application completes an operation whose request died: what phase
/// 3 should commit for it, found without redoing phase 2.
#[async_trait]
pub trait Recover<W>: Send + Sync {
    /// The write for `stale` (its principal, key and operation id), if phase
    /// 2 had an effect (ask the provider under the operation id); `None`
    /// when it had none, and the key waits for its retry. An error is logged
    /// and tried again on the next tick.
    async fn recover(&self, stale: &StaleKey) -> Result<Option<W>, String>;
}

/// Completes what can be completed; returns how many operations were.
pub async fn run_once<W: Send + 'static>(
    store: &dyn KeyStore<W>,
    recover: &dyn Recover<W>,
    in_flight: &InFlight,
) -> usize {
    let stale = match store.stale_keys(BATCH).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "recovery: cannot list stale keys");
            return 0;
        }
    };
    let mut done = 0;
    for k in stale {
        // A request of this process is still on it: merely slow, not dead.
        if in_flight.contains(&k.customer, &k.key) {
            continue;
        }
        match one(store, recover, &k).await {
            Ok(true) => done += 1,
            Ok(false) => {}
            Err(e) => tracing::warn!(customer = k.customer, key = k.key, error = %e,
                "recovery failed; will retry"),
        }
    }
    done
}

/// One key: `Ok(true)` when this call committed its outcome. The application
/// is asked first, and the lock is taken only when there is something to
/// commit: a request that is merely slow keeps its lock while nothing is done.
async fn one<W: Send + 'static>(
    store: &dyn KeyStore<W>,
    recover: &dyn Recover<W>,
    k: &StaleKey,
) -> Result<bool, String> {
    let Some(write) = recover.recover(k).await? else {
        return Ok(false);
    };
    // A retry (or another instance) took it over meanwhile, or it completed.
    let Some(lock) = store.take_over(k).await.map_err(|e| e.to_string())? else {
        return Ok(false);
    };
    let completed = phases::complete(store, &k.customer, &k.key, &lock, write)
        .await
        .map_err(|e| e.to_string())?;
    let Completed::Stored(resp) = completed else {
        return Ok(false);
    };
    tracing::warn!(
        customer = k.customer,
        key = k.key,
        status = resp.status,
        "recovered an operation whose request died between phases"
    );
    Ok(true)
}

/// The reaper: every `period` (the first tick at once, so operations left by
/// a crash are completed right after a restart), [`run_once`], then deletes
/// expired keys. Runs forever: spawn it.
pub async fn reaper<W: Send + 'static>(
    store: &dyn KeyStore<W>,
    recover: &dyn Recover<W>,
    in_flight: &InFlight,
    period: Duration,
) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        run_once(store, recover, in_flight).await;
        match store.reap().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "reaper deleted expired keys"),
            Err(e) => tracing::warn!(error = %e, "reaper failed; will retry"),
        }
    }
}
