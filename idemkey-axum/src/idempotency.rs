//! [`Idempotency`]: what an application keeps in its router state, owning
//! the store, the fingerprint secret, this process's running keys and its
//! cache of completed answers.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::error::Error;
use crate::fingerprint::Fingerprinter;
use crate::in_flight::InFlight;
use crate::key::IdempotencyKey;
use crate::model::KeyRequest;
use crate::phases::{Keys, Reservation};
use crate::recovery::{Recover, Round};
use crate::replay_cache::ReplayCache;
use crate::store::KeyStore;

/// Completed answers a new [`Idempotency`] keeps in memory (under 1 KiB each
/// for small bodies).
pub const DEFAULT_REPLAY_CACHE: usize = 10_000;

/// Longest wait for one [`Recover::recover`] of a new [`Idempotency`].
pub const DEFAULT_RECOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Idempotency for the routes whose phase 3 is the write `W`; cheap to clone
/// (clones share everything).
pub struct Idempotency<W> {
    route: Arc<str>,
    store: Arc<dyn KeyStore<W>>,
    fingerprints: Fingerprinter,
    in_flight: InFlight,
    cache: ReplayCache,
    recovery_timeout: Duration,
    one_commit: bool,
}

impl<W> Clone for Idempotency<W> {
    fn clone(&self) -> Self {
        Idempotency {
            route: self.route.clone(),
            store: self.store.clone(),
            fingerprints: self.fingerprints.clone(),
            in_flight: self.in_flight.clone(),
            cache: self.cache.clone(),
            recovery_timeout: self.recovery_timeout,
            one_commit: self.one_commit,
        }
    }
}

impl<W: Send + 'static> Idempotency<W> {
    /// Keys of the route named `route` (its method and path template, such
    /// as `"POST /orders"`, or any name the application gives it; one
    /// `Idempotency` per route) in `store`, payloads fingerprinted under `fingerprints`' secret
    /// (give every instance on one database the same secret, or a retry on
    /// another instance is a 422), with a cache of
    /// [`DEFAULT_REPLAY_CACHE`] completed answers.
    ///
    /// # Panics
    ///
    /// On an empty `route`: it names the keys stored before keys had routes.
    pub fn new(
        route: &str,
        store: Arc<dyn KeyStore<W>>,
        fingerprints: Fingerprinter,
    ) -> Idempotency<W> {
        // The empty name is that of keys stored before keys had routes.
        assert!(
            !route.is_empty(),
            "Idempotency::new: a route needs a name, such as \"POST /orders\""
        );
        Idempotency {
            route: route.into(),
            store,
            fingerprints,
            in_flight: InFlight::default(),
            cache: ReplayCache::new(DEFAULT_REPLAY_CACHE),
            recovery_timeout: DEFAULT_RECOVERY_TIMEOUT,
            one_commit: false,
        }
    }

    /// The same for a provider that deduplicates by the idempotency key it
    /// is given (Stripe, Adyen, Braintree do): one durable commit per
    /// operation instead of two.
    ///
    /// The operation id is derived from the route, the principal and the
    /// key (not the payload) instead of drawn at random, so a retry
    /// calls the provider under the id the first try used and gets its
    /// first answer. The key then needs no row before the provider is
    /// called: while a request runs, a lock that costs no write holds its
    /// key (on PostgreSQL an advisory lock of the connection the request
    /// holds from phase 1 to phase 3, seen by every instance; on SQLite this
    /// process's map of held keys, so one process per file), and the
    /// operation's one durable commit is phase 3, the answer with the
    /// application's write. A request killed between the provider's answer
    /// and that commit leaves nothing behind: its retry, at once, is the
    /// operation again, and the provider answers it the first payment.
    ///
    /// What changes for a client: another request of a running key is a
    /// `409` whatever its payload (the payload is compared once the first
    /// is done; then another payload is the `422` it always was); a key
    /// whose request died is free once its lock goes (on PostgreSQL, once
    /// the database sees the connection close), not after the lock timeout;
    /// on PostgreSQL a key whose request still runs is let go after the lock
    /// timeout (its transaction rolls back, and that request's commit is
    /// then refused), on SQLite only when its request ends; a retry
    /// with another payload after a request died reaches the provider under
    /// the same operation id, which answers its first payment or refuses the
    /// other payload (the default mode answers it `422`).
    /// What changes for the application: there is no unfinished row for the
    /// [reaper](Idempotency::reaper) to recover, so an operation whose
    /// request died and whose client never retries reaches the provider but
    /// not the application's table (reconcile from the provider's records if
    /// that matters); a key sent again after its TTL, with any payload, is
    /// the same operation id, so the write must be unique by it; a key the
    /// store still holds from the two-commit mode is finished in that mode.
    /// Only for a provider that deduplicates: with one that does not, a
    /// retry after a crash would pay twice.
    pub fn provider_deduplicates(mut self) -> Idempotency<W> {
        self.one_commit = true;
        self
    }

    /// The same, waiting at most `timeout` for each [`Recover::recover`] of
    /// recovery (a look-up that takes longer is asked again on the next
    /// tick).
    ///
    /// # Panics
    ///
    /// On a zero `timeout`, under which no look-up could ever answer.
    pub fn with_recovery_timeout(mut self, timeout: Duration) -> Idempotency<W> {
        assert!(
            !timeout.is_zero(),
            "Idempotency::with_recovery_timeout: a zero timeout leaves no time to answer"
        );
        self.recovery_timeout = timeout;
        self
    }

    /// The same with a cache of `capacity` completed answers (0: none, every
    /// replay reads the store). Safe on many instances: a completed key's
    /// answer never changes before the key expires, and an entry dies at
    /// that expiry. Turn it off if the application deletes keys itself.
    pub fn with_replay_cache(mut self, capacity: usize) -> Idempotency<W> {
        self.cache = ReplayCache::new(capacity);
        self
    }

    /// The key a request names: `principal` scopes it (take it from the
    /// authenticated session, never from a header a client chooses: keys of
    /// two principals never meet), `payload` is fingerprinted in canonical
    /// form (member order and whitespace do not matter, anything else does).
    pub fn request(&self, principal: &str, key: &IdempotencyKey, payload: &Value) -> KeyRequest {
        KeyRequest {
            route: self.route.to_string(),
            customer: principal.to_string(),
            key: key.0.clone(),
            fingerprint: self.fingerprints.of(payload),
        }
    }

    /// The phases, borrowed (see [`Keys`]).
    pub fn keys(&self) -> Keys<'_, W> {
        Keys {
            store: &self.store,
            in_flight: &self.in_flight,
            cache: &self.cache,
            one_commit: self.one_commit,
        }
    }

    /// Look-up and phase 1 for one request: a replay, a refusal (422, 409,
    /// 503), or the [`Operation`](crate::Operation) this request now runs.
    pub async fn begin(
        &self,
        principal: &str,
        key: &IdempotencyKey,
        payload: &Value,
    ) -> Result<Reservation<W>, Error> {
        self.keys()
            .begin(self.request(principal, key, payload))
            .await
    }

    /// One round of recovery of this route's operations (see
    /// [`Recover`]); returns how many it completed.
    pub async fn recover_once(&self, recover: &dyn Recover<W>) -> usize {
        self.round(recover).run().await
    }

    /// The reaper, forever: recovery of this route's operations, then
    /// deletion of expired done keys, every `period` (the first at once).
    /// Spawn it once per process and route.
    pub async fn reaper(self, recover: impl Recover<W>, period: Duration) {
        self.round(&recover).reaper(period).await
    }

    fn round<'a>(&'a self, recover: &'a dyn Recover<W>) -> Round<'a, W> {
        Round {
            store: &*self.store,
            recover,
            in_flight: &self.in_flight,
            route: &self.route,
            timeout: self.recovery_timeout,
        }
    }
}
