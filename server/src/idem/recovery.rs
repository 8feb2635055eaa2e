//! Server-side completion of operations whose request died between phases.
//!
//! A retry with the same key recovers such an operation (phase 1 takes over a
//! stale lock). A client that never comes back would leave the key
//! `in_progress` for good, and if the provider had already been paid, that
//! payment would be missing from the ledger, with nothing to reconcile it
//! against once the reaper deleted the expired key. So every reaper tick also
//! finishes them. For each key whose lock is older than `--lock-timeout`, it
//! asks the provider what it did under that operation id. This is a lookup and
//! never a new payment. If the provider paid or declined, it takes the lock
//! over and phase 3 commits exactly what the request would have, and a later
//! retry gets it as a replay. If the provider has nothing, nothing was paid:
//! the key is left alone for its retry or its expiry.

use crate::idem::error::IdemError;
use crate::idem::in_flight::InFlight;
use crate::idem::phases;
use crate::provider::Provider;
use crate::store::model::{Completed, StaleKey};
use crate::store::Store;

/// Stale keys looked at per tick; the rest wait for the next one.
const BATCH: usize = 500;

/// Completes what can be completed; returns how many operations were.
pub async fn run_once(store: &dyn Store, provider: &Provider, in_flight: &InFlight) -> usize {
    let stale = match store.stale_keys(BATCH).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "recovery: cannot list stale keys");
            return 0;
        }
    };
    let mut done = 0;
    for k in stale {
        // A request of this instance is still on it: merely slow, not dead.
        if in_flight.contains(&k.customer, &k.key) {
            continue;
        }
        match recover(store, provider, &k).await {
            Ok(true) => done += 1,
            Ok(false) => {}
            Err(e) => tracing::warn!(customer = k.customer, key = k.key, error = %e,
                "recovery failed; will retry"),
        }
    }
    done
}

/// One key: `Ok(true)` when this call committed its outcome. The provider is
/// asked first, and the lock is taken only when there is something to commit:
/// a request that is merely slow keeps its lock while nothing is paid.
async fn recover(store: &dyn Store, provider: &Provider, k: &StaleKey) -> Result<bool, IdemError> {
    let found = provider
        .find(k.customer.clone(), k.key.clone(), k.reservation.clone())
        .await?;
    // Nothing paid: nothing to complete; the key waits for its retry.
    let Some(rec) = found else {
        return Ok(false);
    };
    // A retry (or another instance) took it over meanwhile, or it completed.
    let Some(lock) = store.take_over(k).await? else {
        return Ok(false);
    };
    let completed = phases::complete(
        store,
        &k.customer,
        &k.key,
        &lock,
        rec.amount,
        &rec.currency,
        rec.payment,
    )
    .await?;
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
