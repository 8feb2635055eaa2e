//! Completion of operations whose request died between phases, and the
//! reaper that runs it and deletes expired keys, one route at a time.
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
//! is left alone for its retry, and once expired it is deleted. A look-up
//! that fails or hangs leaves the key as it was for the next tick: an
//! unfinished operation is never deleted on the way, whatever its age.
//!
//! Expiry of done keys is enforced in phase 1 (an expired done key is a new
//! operation even before the reaper ran); deleting them only keeps the table
//! from growing forever. On a shared database every instance runs a reaper;
//! they claim rows without waiting for each other.

use std::time::Duration;

use async_trait::async_trait;
use futures_util::stream::{self, StreamExt};

use crate::in_flight::InFlight;
use crate::model::{Completed, StaleKey};
use crate::phases;
use crate::store::KeyStore;

/// Stale keys looked at per tick; the rest wait for the next one.
const BATCH: usize = 500;
/// [`Recover`] calls running at once in one tick.
const CONCURRENT: usize = 8;

/// Why a [`Recover::recover`] could not tell (the provider is unreachable,
/// say): any error, kept as it is for the log.
pub type RecoverError = Box<dyn std::error::Error + Send + Sync>;

/// How an application completes an operation whose request died: what phase
/// 3 should commit for it, found without redoing phase 2.
#[async_trait]
pub trait Recover<W>: Send + Sync {
    /// The write for `stale` (its route, principal, key and operation id),
    /// if phase 2 had an effect (ask the provider under the operation id);
    /// `None` when the provider never heard of the operation: the key then
    /// waits for its retry, or, once expired, is deleted. An error (or no
    /// answer within the recovery timeout) is logged and the key is asked
    /// about again on the next tick.
    async fn recover(&self, stale: &StaleKey) -> Result<Option<W>, RecoverError>;
}

/// One round of recovery of `route`'s operations.
pub(crate) struct Round<'a, W: Send + 'static> {
    /// The key store.
    pub store: &'a dyn KeyStore<W>,
    /// The application's look-up of what phase 2 did.
    pub recover: &'a dyn Recover<W>,
    /// Keys this process's requests are on.
    pub in_flight: &'a InFlight,
    /// The route whose keys it completes.
    pub route: &'a str,
    /// Longest wait for one [`Recover::recover`].
    pub timeout: Duration,
}

/// What recovery did with one key.
enum Outcome {
    /// Its outcome committed.
    Committed,
    /// Deleted: expired, and the provider never heard of it.
    Forgotten,
    /// Left as it was, for its retry or the next tick.
    Left,
}

impl<W: Send + 'static> Round<'_, W> {
    /// Completes what can be completed; returns how many operations were.
    /// Keys are looked up [`CONCURRENT`] at a time, each within the timeout:
    /// one hung look-up holds up no other.
    pub async fn run(&self) -> usize {
        let stale = match self.store.stale_keys(self.route, BATCH).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "recovery: cannot list stale keys");
                return 0;
            }
        };
        // A request of this process is still on it: merely slow, not dead.
        let dead = stale
            .into_iter()
            .filter(|k| !self.in_flight.contains(&k.principal, &k.key));
        let outcomes: Vec<Outcome> = stream::iter(dead)
            .map(|k| async move {
                match self.one(&k).await {
                    Ok(o) => o,
                    Err(e) => {
                        tracing::warn!(principal = k.principal, key = k.key, error = %e,
                            "recovery failed; will retry");
                        Outcome::Left
                    }
                }
            })
            .buffer_unordered(CONCURRENT)
            .collect()
            .await;
        outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Committed))
            .count()
    }

    /// One key. The application is asked first, and the lock is taken only
    /// when there is something to do: a request that is merely slow keeps
    /// its lock while nothing is done.
    async fn one(&self, k: &StaleKey) -> Result<Outcome, String> {
        let found = tokio::time::timeout(self.timeout, self.recover.recover(k))
            .await
            .map_err(|_| format!("no answer from Recover within {:?}", self.timeout))?
            .map_err(|e| e.to_string())?;
        let write = match found {
            Some(write) => write,
            None if k.expired => return self.forget(k).await,
            None => return Ok(Outcome::Left),
        };
        // A retry (or another instance) took it over meanwhile, or it completed.
        let Some(lock) = self.store.take_over(k).await.map_err(|e| e.to_string())? else {
            return Ok(Outcome::Left);
        };
        let completed = phases::complete(self.store, &k.principal, &k.key, &lock, write)
            .await
            .map_err(|e| e.to_string())?;
        let Completed::Stored(resp) = completed else {
            return Ok(Outcome::Left);
        };
        tracing::warn!(
            principal = k.principal,
            key = k.key,
            status = resp.status,
            "recovered an operation whose request died between phases"
        );
        Ok(Outcome::Committed)
    }

    /// Deletes an expired key whose operation never reached the provider:
    /// resolved, it may go; its retry is a new operation.
    async fn forget(&self, k: &StaleKey) -> Result<Outcome, String> {
        let Some(lock) = self.store.take_over(k).await.map_err(|e| e.to_string())? else {
            return Ok(Outcome::Left);
        };
        if self
            .store
            .forget(k, &lock)
            .await
            .map_err(|e| e.to_string())?
        {
            tracing::info!(
                principal = k.principal,
                key = k.key,
                "deleted an expired key whose operation never reached the provider"
            );
            return Ok(Outcome::Forgotten);
        }
        Ok(Outcome::Left)
    }

    /// The reaper: every `period` (the first tick at once, so operations
    /// left by a crash are completed right after a restart), [`Round::run`],
    /// then deletes expired done keys. Runs forever: spawn it.
    pub async fn reaper(&self, period: Duration) {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.run().await;
            match self.store.reap().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "reaper deleted expired keys"),
                Err(e) => tracing::warn!(error = %e, "reaper failed; will retry"),
            }
        }
    }
}
