//! The phases of a keyed request, explicit to the handler.
//!
//! 0. [`Keys::look`]: read-only, first this process's cache of completed
//!    answers, then the store without any lock. A finished key is replayed,
//!    another payload is 422, a live lock is 409: these never queue behind a
//!    write. `None`: the request will do work. ([`Keys::begin`] tries the
//!    reservation of a key nobody has before the store's look-up: one
//!    `INSERT … ON CONFLICT DO NOTHING`, on either store.)
//! 1. [`Keys::reserve`]: atomically, and judged again (the look-up may have
//!    raced another request): the key becomes this request's, with an
//!    operation id ([`Operation::operation_id`]), or is answered after all.
//!    In the one-commit mode the key is held with a lock that writes
//!    nothing ([`KeyStore::hold`]), the operation id derived from the
//!    request.
//! 2. The handler's own work that must not run twice (the provider call,
//!    made with the operation id as its idempotency key), outside any
//!    transaction.
//! 3. [`Operation::commit`]: the application's write, the stored response
//!    and the key's `done` state, in one transaction, only while this request
//!    still holds the lock.
//!
//! Phase 3 is shared with [`recovery`](crate::recovery), which completes
//! operations whose request died between phases exactly as the request would
//! have.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::Error;
use crate::hold::{HeldKey, Hold};
use crate::ids::operation_id;
use crate::in_flight::{Held, InFlight};
use crate::model::{Completed, KeyRequest, Lock, Lookup, Reserved, StoredResponse};
use crate::replay_cache::{Cached, ReplayCache};
use crate::store::KeyStore;

/// Header marking a replayed answer (the name the idemkey browser module
/// reads).
pub const REPLAYED: &str = "idempotent-replayed";

/// A final answer: stored by this request, or replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The stored (or just committed) response.
    pub response: StoredResponse,
    /// True when it is a replay (sent with `Idempotent-Replayed: true`).
    pub replayed: bool,
    /// True when this process's cache of completed answers gave it.
    pub from_cache: bool,
}

impl Answer {
    fn replay(response: StoredResponse) -> Answer {
        Answer {
            response,
            replayed: true,
            from_cache: false,
        }
    }
}

impl IntoResponse for Answer {
    /// The stored status, `Content-Type`, headers and body, byte for byte;
    /// a replay adds `Idempotent-Replayed: true`.
    fn into_response(self) -> Response {
        let r = self.response;
        let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let ctype = HeaderValue::from_str(&r.content_type)
            .unwrap_or(HeaderValue::from_static("application/json"));
        let mut resp =
            (status, [(axum::http::header::CONTENT_TYPE, ctype)], r.body).into_response();
        for (name, value) in &r.headers {
            match (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                (Ok(n), Ok(v)) => {
                    resp.headers_mut().append(n, v);
                }
                _ => tracing::error!(name, "a stored header that is not one; not sent"),
            }
        }
        if self.replayed {
            resp.headers_mut()
                .insert(REPLAYED, HeaderValue::from_static("true"));
        }
        resp
    }
}

/// The phases one by one, for a handler that acts between them (see
/// [`Idempotency::keys`](crate::Idempotency::keys)): borrowed from the
/// [`Idempotency`](crate::Idempotency), with its store, this process's
/// running keys and its cache of completed answers.
pub struct Keys<'a, W> {
    pub(crate) store: &'a Arc<dyn KeyStore<W>>,
    pub(crate) in_flight: &'a InFlight,
    pub(crate) cache: &'a ReplayCache,
    /// The one-commit mode: the provider deduplicates by the operation id.
    pub(crate) one_commit: bool,
}

/// What phase 1 decided.
pub enum Reservation<W: Send + 'static> {
    /// The key is answered already: a replay (the reservation found it done).
    Answered(Answer),
    /// This request owns the key and must do the work.
    Proceed(Operation<W>),
}

impl<W: Send + 'static> std::fmt::Debug for Reservation<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reservation::Answered(a) => f.debug_tuple("Answered").field(a).finish(),
            Reservation::Proceed(op) => f.debug_tuple("Proceed").field(&op.lock).finish(),
        }
    }
}

impl<'a, W: Send + 'static> Keys<'a, W> {
    /// The read-only look-up: `Some` answer (a replay) when the key is done
    /// with this payload, an error for 422 and 409, `None` when the request
    /// is to go on to [`Keys::reserve`].
    pub async fn look(&self, req: &KeyRequest) -> Result<Option<Answer>, Error> {
        if let Some(answer) = self.cached(req)? {
            return Ok(Some(answer));
        }
        self.look_in_store(req).await
    }

    /// The cache of completed answers: a replay, a 422, or `None` (not there).
    fn cached(&self, req: &KeyRequest) -> Result<Option<Answer>, Error> {
        match self.cache.get(req) {
            Some(Cached::Replay(r)) => Ok(Some(Answer {
                from_cache: true,
                ..Answer::replay(r)
            })),
            Some(Cached::KeyReused) => Err(Error::KeyReused),
            None => Ok(None),
        }
    }

    /// The look-up in the store; a replay it finds goes into the cache.
    async fn look_in_store(&self, req: &KeyRequest) -> Result<Option<Answer>, Error> {
        let asked = Instant::now();
        let found = self.store.lookup(req).await?;
        self.answer(req, asked, found)
    }

    /// What a look-up `found` (asked at `asked`) answers; a replay goes into
    /// the cache.
    fn answer(
        &self,
        req: &KeyRequest,
        asked: Instant,
        found: Lookup,
    ) -> Result<Option<Answer>, Error> {
        match found {
            Lookup::Replay {
                response,
                expires_in_ms,
            } => {
                let left = Duration::from_millis(u64::try_from(expires_in_ms).unwrap_or(0));
                self.cache.put(req, &response, asked, left);
                Ok(Some(Answer::replay(response)))
            }
            Lookup::KeyReused => Err(Error::KeyReused),
            Lookup::InProgress => Err(Error::InProgress),
            Lookup::Free => Ok(None),
        }
    }

    /// Phase 1. From here until the [`Operation`] is committed, released or
    /// dropped, this process's recovery leaves the key to this request. In
    /// the one-commit mode the key is held without a write
    /// ([`KeyStore::hold`]), unless an unfinished operation of the
    /// two-commit mode has it.
    pub async fn reserve(&self, req: KeyRequest) -> Result<Reservation<W>, Error> {
        if self.one_commit {
            if let Some(r) = self.hold(&req).await? {
                return Ok(r);
            }
        }
        let held = self.in_flight.hold(&req.customer, &req.key);
        let lock = match self.store.reserve(&req).await? {
            Reserved::Proceed(lock) => lock,
            Reserved::Replay(r) => return Ok(Reservation::Answered(Answer::replay(r))),
            Reserved::KeyReused => return Err(Error::KeyReused),
            Reserved::InProgress => return Err(Error::InProgress),
        };
        Ok(Reservation::Proceed(self.operation(req, lock, held)))
    }

    /// The usual start of a keyed request: the cache of completed answers,
    /// then a key nobody has reserved at once where the store does that in
    /// one statement ([`KeyStore::reserve_new`]), then [`Keys::look`] and
    /// [`Keys::reserve`]. The answers are those of the look-up and phase 1
    /// in that order.
    pub async fn begin(&self, req: KeyRequest) -> Result<Reservation<W>, Error> {
        if let Some(answer) = self.cached(&req)? {
            return Ok(Reservation::Answered(answer));
        }
        if self.one_commit {
            return self.reserve(req).await;
        }
        let held = self.in_flight.hold(&req.customer, &req.key);
        if let Some(lock) = self.store.reserve_new(&req).await? {
            return Ok(Reservation::Proceed(self.operation(req, lock, held)));
        }
        drop(held);
        if let Some(answer) = self.look_in_store(&req).await? {
            return Ok(Reservation::Answered(answer));
        }
        self.reserve(req).await
    }

    /// The one-commit mode's phase 1: the operation, a replay or a refusal;
    /// `None` when an unfinished operation of the two-commit mode has the
    /// key.
    async fn hold(&self, req: &KeyRequest) -> Result<Option<Reservation<W>>, Error> {
        let (asked, held) = (Instant::now(), self.in_flight.hold(&req.customer, &req.key));
        match self.store.hold(req).await? {
            Hold::Proceed(key) => {
                let lock = Lock {
                    reservation: operation_id(req),
                    owner: String::new(),
                    recovered: false,
                };
                let mut op = self.operation(req.clone(), lock, held);
                op.holding = Some(key);
                Ok(Some(Reservation::Proceed(op)))
            }
            Hold::Answered(Lookup::Free) => Ok(None),
            Hold::Answered(found) => Ok(self.answer(req, asked, found)?.map(Reservation::Answered)),
        }
    }

    /// The operation `lock` starts, holding the key in this process.
    fn operation(&self, req: KeyRequest, lock: Lock, held: Held) -> Operation<W> {
        if lock.recovered {
            tracing::warn!(
                customer = req.customer,
                key = req.key,
                "taking over a key whose request died between phases"
            );
        }
        Operation {
            store: self.store.clone(),
            req,
            lock,
            holding: None,
            settled: false,
            _held: held,
        }
    }
}

/// A key this request holds, between phase 1 and phase 3.
///
/// Commit it ([`Operation::commit`]) or release it ([`Operation::release`])
/// after a failure that left nothing to commit, so the retry may start at
/// once. One dropped before either finished (axum drops a handler whose
/// client hung up, at whatever `.await` it was) is released on a task of its
/// own: the client's retry takes the operation over at once, with the same
/// operation id, so the provider answers it the first call's result. Only a
/// process that dies keeps the lock until the lock timeout; then a retry
/// takes the operation over, or the [reaper](crate::Idempotency::reaper) completes it.
///
/// It owns what it needs: it may move into a task of its own
/// (`tokio::spawn`) and outlive the handler that began it.
pub struct Operation<W: Send + 'static> {
    store: Arc<dyn KeyStore<W>>,
    req: KeyRequest,
    lock: Lock,
    /// The one-commit mode's hold of the key (dropping it lets go).
    holding: Option<Box<dyn HeldKey<W>>>,
    /// True once phase 3 answered or the lock was released.
    settled: bool,
    _held: Held,
}

impl<W: Send + 'static> Drop for Operation<W> {
    fn drop(&mut self) {
        if !self.settled && self.holding.is_none() {
            self.store
                .release_in_background(&self.req.customer, &self.req.key, &self.lock);
        }
    }
}

impl<W: Send + 'static> Operation<W> {
    /// The principal the key is scoped by.
    pub fn principal(&self) -> &str {
        &self.req.customer
    }

    /// The client's key.
    pub fn key(&self) -> &str {
        &self.req.key
    }

    /// The operation's id: the same for every try of one operation (a
    /// takeover keeps it), new when an expired key starts another; in the
    /// one-commit mode derived from the route, principal and key, the same
    /// for every try of them whatever its payload. Pass it
    /// to the provider as its idempotency key, so that a second call of an
    /// operation returns the first call's answer.
    pub fn operation_id(&self) -> &str {
        &self.lock.reservation
    }

    /// True when this request took over the key of a request that died
    /// between phases (phase 2 may have run already: the provider's
    /// deduplication answers for it).
    pub fn recovered(&self) -> bool {
        self.lock.recovered
    }

    /// The lock itself.
    pub fn lock(&self) -> &Lock {
        &self.lock
    }

    /// Phase 3: `write` and the response it returns are committed with the
    /// key's `done` state in one transaction; the answer is returned once
    /// that commit is durable. If another request took the operation over
    /// and finished first, its stored answer is the answer (a replay); if it
    /// still runs, [`Error::InProgress`]. In the one-commit mode a row that
    /// a request of the two-commit mode wrote meanwhile, under an operation
    /// id of its own, is [`Error::InProgress`] whether that request finished
    /// or not (the write rolled back); the retry is then answered from it.
    pub async fn commit(mut self, write: W) -> Result<Answer, Error> {
        let done = match self.holding.take() {
            Some(key) => key
                .complete(&self.req, &self.lock.reservation, write)
                .await
                .map_err(Error::from),
            None => {
                complete(
                    &*self.store,
                    &self.req.customer,
                    &self.req.key,
                    &self.lock,
                    write,
                )
                .await
            }
        };
        // Answered (or released by `complete` after a failure): nothing left to hand back.
        self.settled = true;
        match done? {
            Completed::Stored(response) => Ok(Answer {
                response,
                replayed: false,
                from_cache: false,
            }),
            Completed::AlreadyDone(response) => Ok(Answer::replay(response)),
            Completed::LockLost => Err(Error::InProgress),
        }
    }

    /// Gives the key back after a failure of phase 2 (the provider could not
    /// be reached, say): the next try takes the operation over at once, with
    /// the same operation id.
    pub async fn release(mut self) {
        if self.holding.take().is_none() {
            release(&*self.store, &self.req.customer, &self.req.key, &self.lock).await;
        }
        self.settled = true;
    }
}

/// Phase 3, shared by a request and recovery: commits `write` only if `lock`
/// still owns the key. On a store failure the key is handed back at once,
/// not after the lock timeout.
pub async fn complete<W: Send + 'static>(
    store: &dyn KeyStore<W>,
    customer: &str,
    key: &str,
    lock: &Lock,
    write: W,
) -> Result<Completed, Error> {
    match store.complete(customer, key, lock, write).await {
        Ok(c) => Ok(c),
        Err(e) => {
            release(store, customer, key, lock).await;
            Err(e.into())
        }
    }
}

/// Releases the lock after a failure, best effort.
async fn release<W: Send + 'static>(
    store: &dyn KeyStore<W>,
    customer: &str,
    key: &str,
    lock: &Lock,
) {
    if let Err(e) = store.release(customer, key, lock).await {
        tracing::error!(error = %e, "could not release a key lock; it frees itself after the lock timeout");
    }
}
