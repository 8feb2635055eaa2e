//! What the key store keeps and answers: stored responses, key locks and the
//! outcomes of each phase.
//!
//! [`decide`] is the one rule that turns a key's row into "replay", "422",
//! "409", "new operation" or "take over", so both stores and both paths (the
//! read-only look-up and the locked reservation) judge a key the same way.

pub(crate) use crate::stored::StoredResponse;

/// The key a request names: its route, its scope (the principal the
/// application supplies), the client's key, the payload fingerprint.
#[derive(Debug, Clone)]
pub struct KeyRequest {
    /// The route the key belongs to (see [`Idempotency::new`](crate::Idempotency::new)).
    pub route: String,
    /// The principal keys are scoped by (a customer, an account): keys of two
    /// principals never meet.
    pub customer: String,
    /// The client's key.
    pub key: String,
    /// Payload fingerprint.
    pub fingerprint: String,
}

/// What the read-only look-up found; it never waits for a writer.
#[derive(Debug)]
pub enum Lookup {
    /// The key is done: its stored answer, which stays the key's answer
    /// until the key expires, `expires_in_ms` after the look-up (the store's
    /// clock).
    Replay {
        /// The stored answer.
        response: StoredResponse,
        /// Milliseconds from the look-up to the key's expiry.
        expires_in_ms: i64,
    },
    /// The key is known with another payload.
    KeyReused,
    /// Another request holds a live lock on the key.
    InProgress,
    /// Unknown, expired or stale: the request may try to reserve it.
    Free,
}

/// What phase 1 (the reservation, under the store's lock) found.
#[derive(Debug)]
pub enum Reserved {
    /// This request owns the key now and must do the work.
    Proceed(Lock),
    /// The key is done: answer with its stored response.
    Replay(StoredResponse),
    /// The key is known with another payload.
    KeyReused,
    /// Another request holds a live lock on the key.
    InProgress,
}

/// Ownership of an in-progress key.
#[derive(Debug, Clone)]
pub struct Lock {
    /// The operation id passed to the provider.
    pub reservation: String,
    /// Random token proving this request still holds the lock in phase 3.
    pub owner: String,
    /// True when a dead request's lock was taken over.
    pub recovered: bool,
}

/// Result of phase 3.
#[derive(Debug)]
pub enum Completed {
    /// Committed by this request.
    Stored(StoredResponse),
    /// Another request (which took over after our lock went stale) finished
    /// first; this is its stored answer.
    AlreadyDone(StoredResponse),
    /// The lock is no longer ours and the key is not done (taken over by a
    /// request still running, or deleted): nothing was written.
    LockLost,
}

/// An in-progress key whose lock is older than the lock timeout.
#[derive(Debug, Clone)]
pub struct StaleKey {
    /// The route the key belongs to.
    pub route: String,
    /// The principal the key is scoped by.
    pub principal: String,
    /// The client's key.
    pub key: String,
    /// The operation the dead request was doing: the id phase 2 gave the
    /// provider.
    pub operation_id: String,
    /// True when the key's TTL has passed: once recovery learns that its
    /// operation never reached the provider, the key is deleted.
    pub expired: bool,
}

/// A key's row as both stores read it.
#[derive(Debug)]
pub struct KeyRow {
    /// The route it belongs to; empty for a key stored before keys had
    /// routes, which the first route that asks for it adopts.
    pub route: String,
    /// Payload fingerprint of the operation.
    pub fingerprint: String,
    /// Operation id.
    pub reservation: String,
    /// `Some` once done (the stored answer), `None` while in progress.
    pub done: Option<StoredResponse>,
    /// Lock stamp, ms on the store's clock (0: released).
    pub locked_at: i64,
    /// Expiry, ms on the store's clock.
    pub expires_at: i64,
}

/// What a request may do with a key, judged from its row.
#[derive(Debug)]
pub enum Decision {
    /// Answer the stored response.
    Replay(StoredResponse),
    /// 422: another payload, or another route.
    KeyReused,
    /// 409: a live lock.
    InProgress,
    /// No row, or an expired done one: a new operation with a new id.
    New,
    /// A stale lock (its request died), whatever the key's age: the same
    /// operation, taken over.
    TakeOver {
        /// The operation id to keep.
        reservation: String,
    },
}

/// A key's row as phase 3 reads it (under the store's write lock), for the
/// reservation of the lock: its state, its lock owner, its stored answer.
#[derive(Debug)]
pub struct CompletionRow {
    /// True once done.
    pub done: bool,
    /// Who holds the lock.
    pub owner: String,
    /// The stored answer (set once done).
    pub stored: Option<StoredResponse>,
}

/// Phase 3's rule, for both stores: whether `lock` may write its outcome
/// (`None`), or what to answer instead. A key done by another request that
/// took the operation over gives its answer; a key taken over by a request
/// still running, or deleted (no row: a ledger reset), is lost.
pub fn completion(row: Option<CompletionRow>, lock: &Lock) -> Option<Completed> {
    match row {
        Some(r) if r.done => Some(match r.stored {
            Some(stored) => Completed::AlreadyDone(stored),
            None => Completed::LockLost,
        }),
        Some(r) if r.owner == lock.owner => None,
        _ => Some(Completed::LockLost),
    }
}

/// The reaper's rule: a key may be deleted once it is expired and done. An
/// operation left unfinished is never reaped, however old: it may have
/// reached the provider, and its row is the one anchor its recovery (or its
/// retry) has. Only recovery deletes one, once it learns that the operation
/// never reached the provider. Deleting a done expired key loses nothing:
/// [`decide`] already treats it as a new operation.
pub fn reapable(row: &KeyRow, now: i64) -> bool {
    row.expires_at <= now && row.done.is_some()
}

/// [`reapable`] as an SQL condition over the table's columns; `now` is the
/// SQL of the store's clock.
pub fn reapable_sql(now: &str) -> String {
    format!("expires_at <= {now} AND state = 'done'")
}

/// Recovery's rule: an in-progress key whose lock is older than the lock
/// timeout (its request died, or is slower than the timeout) is stale.
pub fn stale_sql(now: &str, lock_ms: &str) -> String {
    format!("state = 'in_progress' AND locked_at + {lock_ms} <= {now}")
}

/// The read-only look-up's answer for `req`'s `row`, judged by [`decide`].
pub fn lookup(row: Option<KeyRow>, req: &KeyRequest, now: i64, lock_ms: i64) -> Lookup {
    held(row, req, now, lock_ms).unwrap_or(Lookup::Free)
}

/// The one-commit mode's rule, for a request that holds `req`'s key without
/// a write: `None` when it runs a new operation (no row, or an expired done
/// one); otherwise what the key answers, judged by [`decide`], with
/// [`Lookup::Free`] for an unfinished operation whose lock went stale (the
/// two-commit mode takes it over).
pub fn held(row: Option<KeyRow>, req: &KeyRequest, now: i64, lock_ms: i64) -> Option<Lookup> {
    let expires_at = row.as_ref().map_or(now, |r| r.expires_at);
    Some(match decide(row, req, now, lock_ms) {
        Decision::Replay(response) => Lookup::Replay {
            response,
            expires_in_ms: expires_at - now,
        },
        Decision::KeyReused => Lookup::KeyReused,
        Decision::InProgress => Lookup::InProgress,
        Decision::TakeOver { .. } => Lookup::Free,
        Decision::New => return None,
    })
}

/// Judges `row` for the request `req` at `now` (ms, the store's clock).
///
/// Only a done key expires: after its TTL it is a new operation, with any
/// payload. A key whose operation is unfinished (its request running, dead,
/// or released after a failure) stays that operation whatever its age: the
/// same request takes it over under its operation id, another payload or
/// route is refused.
pub fn decide(row: Option<KeyRow>, req: &KeyRequest, now: i64, lock_ms: i64) -> Decision {
    let Some(row) = row else {
        return Decision::New;
    };
    if row.done.is_some() && row.expires_at <= now {
        return Decision::New;
    }
    let other_route = !row.route.is_empty() && row.route != req.route;
    if other_route || row.fingerprint != req.fingerprint {
        return Decision::KeyReused;
    }
    match row.done {
        Some(resp) => Decision::Replay(resp),
        None if row.locked_at + lock_ms > now => Decision::InProgress,
        None => Decision::TakeOver {
            reservation: row.reservation,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(done: bool, locked_at: i64, expires_at: i64) -> KeyRow {
        KeyRow {
            route: "POST /r".into(),
            fingerprint: "fp".into(),
            reservation: "op_1".into(),
            done: done.then(|| StoredResponse::json(201, b"{}".to_vec())),
            locked_at,
            expires_at,
        }
    }

    fn req(route: &str, fingerprint: &str) -> KeyRequest {
        KeyRequest {
            route: route.into(),
            customer: "c".into(),
            key: "k".into(),
            fingerprint: fingerprint.into(),
        }
    }

    #[test]
    fn phase_3_writes_only_under_its_own_lock() {
        let lock = Lock {
            reservation: "op".into(),
            owner: "me".into(),
            recovered: false,
        };
        let row = |done: bool, owner: &str, stored: bool| {
            Some(CompletionRow {
                done,
                owner: owner.into(),
                stored: stored.then(|| StoredResponse::json(201, b"{}".to_vec())),
            })
        };
        assert!(completion(row(false, "me", false), &lock).is_none());
        assert!(matches!(
            completion(row(false, "other", false), &lock),
            Some(Completed::LockLost)
        ));
        assert!(matches!(
            completion(row(true, "other", true), &lock),
            Some(Completed::AlreadyDone(_))
        ));
        assert!(matches!(
            completion(row(true, "me", true), &lock),
            Some(Completed::AlreadyDone(_))
        ));
        assert!(matches!(completion(None, &lock), Some(Completed::LockLost)));
    }

    #[test]
    fn the_reaper_deletes_only_done_keys_that_decide_treats_as_new() {
        let now = 100;
        for (done, locked_at, expires_at) in [
            (true, 0, 5),
            (false, 0, 5),
            (false, 95, 5),
            (true, 0, 500),
            (false, 95, 500),
        ] {
            let r = || row(done, locked_at, expires_at);
            if reapable(&r(), now) {
                assert!(matches!(
                    decide(Some(r()), &req("POST /r", "fp"), now, 10),
                    Decision::New
                ));
            }
        }
        assert!(reapable(&row(true, 0, 5), now));
        assert!(
            !reapable(&row(false, 50, 5), now,),
            "an unfinished operation is never reaped, however old"
        );
    }

    #[test]
    fn each_state_of_a_key() {
        let (now, lock) = (1_000, 100);
        let fp = req("POST /r", "fp");
        let decide = |row, r: &KeyRequest| decide(row, r, now, lock);
        assert!(matches!(decide(None, &fp), Decision::New));
        assert!(matches!(
            decide(Some(row(true, 0, 2_000)), &fp),
            Decision::Replay(_)
        ));
        assert!(matches!(
            decide(Some(row(true, 0, 2_000)), &req("POST /r", "other")),
            Decision::KeyReused
        ));
        assert!(matches!(
            decide(Some(row(false, 950, 2_000)), &fp),
            Decision::InProgress
        ));
        assert!(matches!(
            decide(Some(row(false, 950, 2_000)), &req("POST /r", "other")),
            Decision::KeyReused
        ));
        assert!(matches!(
            decide(Some(row(false, 900, 2_000)), &fp),
            Decision::TakeOver { reservation } if reservation == "op_1"
        ));
        // Another route: refused in every state a key can be in.
        for r in [
            row(true, 0, 2_000),
            row(false, 950, 2_000),
            row(false, 0, 2_000),
        ] {
            assert!(matches!(
                decide(Some(r), &req("POST /other", "fp")),
                Decision::KeyReused
            ));
        }
        // A key stored before keys had routes is adopted.
        let unrouted = KeyRow {
            route: String::new(),
            ..row(true, 0, 2_000)
        };
        assert!(matches!(decide(Some(unrouted), &fp), Decision::Replay(_)));
        // Expired and done: new, even with another payload or route.
        assert!(matches!(
            decide(Some(row(true, 0, 1_000)), &req("POST /other", "other")),
            Decision::New
        ));
        // Expired and unfinished: the same operation, never a new one.
        assert!(matches!(
            decide(Some(row(false, 0, 900)), &fp),
            Decision::TakeOver { reservation } if reservation == "op_1"
        ));
        assert!(matches!(
            decide(Some(row(false, 0, 900)), &req("POST /r", "other")),
            Decision::KeyReused
        ));
        assert!(matches!(
            decide(Some(row(false, 950, 900)), &fp),
            Decision::InProgress
        ));
    }
}
