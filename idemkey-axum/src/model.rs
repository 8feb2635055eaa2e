//! What the key store keeps and answers: stored responses, key locks and the
//! outcomes of each phase.
//!
//! [`decide`] is the one rule that turns a key's row into "replay", "422",
//! "409", "new operation" or "take over", so both stores and both paths (the
//! read-only look-up and the locked reservation) judge a key the same way.

/// A final answer as stored for replay: sent again byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// Content-Type header value.
    pub content_type: String,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl StoredResponse {
    /// A response of `status` with a JSON `body` (`application/json`).
    pub fn json(status: u16, body: Vec<u8>) -> StoredResponse {
        StoredResponse {
            status,
            content_type: "application/json".into(),
            body,
        }
    }
}

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
    /// Customer scope.
    pub customer: String,
    /// The client's key.
    pub key: String,
    /// The operation the dead request was doing.
    pub reservation: String,
}

/// A key's row as both stores read it.
#[derive(Debug)]
pub struct KeyRow {
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
    /// 422: another payload.
    KeyReused,
    /// 409: a live lock.
    InProgress,
    /// No row, or an expired one: a new operation with a new id.
    New,
    /// A stale lock (its request died): the same operation, taken over.
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

/// The reaper's rule: an expired key whose request is not running (done,
/// or its lock stale) may be deleted. Deleting it loses nothing: [`decide`]
/// already treats an expired key as a new operation.
pub fn reapable(row: &KeyRow, now: i64, lock_ms: i64) -> bool {
    row.expires_at <= now && (row.done.is_some() || row.locked_at + lock_ms <= now)
}

/// [`reapable`] as an SQL condition over the table's columns; `now` and
/// `lock_ms` are the SQL of the store's clock and of the lock timeout.
pub fn reapable_sql(now: &str, lock_ms: &str) -> String {
    format!("expires_at <= {now} AND (state = 'done' OR locked_at + {lock_ms} <= {now})")
}

/// Recovery's rule: an in-progress key whose lock is older than the lock
/// timeout (its request died, or is slower than the timeout) is stale.
pub fn stale_sql(now: &str, lock_ms: &str) -> String {
    format!("state = 'in_progress' AND locked_at + {lock_ms} <= {now}")
}

/// The read-only look-up's answer for `row`, judged by [`decide`].
pub fn lookup(row: Option<KeyRow>, fingerprint: &str, now: i64, lock_ms: i64) -> Lookup {
    let expires_at = row.as_ref().map_or(now, |r| r.expires_at);
    match decide(row, fingerprint, now, lock_ms) {
        Decision::Replay(response) => Lookup::Replay {
            response,
            expires_in_ms: expires_at - now,
        },
        Decision::KeyReused => Lookup::KeyReused,
        Decision::InProgress => Lookup::InProgress,
        Decision::New | Decision::TakeOver { .. } => Lookup::Free,
    }
}

/// Judges `row` for a request with `fingerprint` at `now` (ms, the store's clock).
pub fn decide(row: Option<KeyRow>, fingerprint: &str, now: i64, lock_ms: i64) -> Decision {
    let Some(row) = row else {
        return Decision::New;
    };
    let lock_live = row.done.is_none() && row.locked_at + lock_ms > now;
    // After the TTL the key is a new operation, unless its request still runs.
    if row.expires_at <= now && !lock_live {
        return Decision::New;
    }
    if row.fingerprint != fingerprint {
        return Decision::KeyReused;
    }
    match row.done {
        Some(resp) => Decision::Replay(resp),
        None if lock_live => Decision::InProgress,
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
            fingerprint: "fp".into(),
            reservation: "op_1".into(),
            done: done.then(|| StoredResponse {
                status: 201,
                content_type: "application/json".into(),
                body: b"{}".to_vec(),
            }),
            locked_at,
            expires_at,
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
                stored: stored.then(|| StoredResponse {
                    status: 201,
                    content_type: "application/json".into(),
                    body: b"{}".to_vec(),
                }),
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
    fn the_reaper_deletes_only_what_decide_treats_as_new() {
        for (done, locked_at, expires_at) in [
            (true, 0, 5),
            (false, 0, 5),
            (false, 95, 5),
            (true, 0, 500),
            (false, 95, 500),
        ] {
            let now = 100;
            let fp = "fp";
            if reapable(&row(done, locked_at, expires_at), now, 10) {
                assert!(matches!(
                    decide(Some(row(done, locked_at, expires_at)), fp, now, 10),
                    Decision::New
                ));
            }
        }
        assert!(
            !reapable(&row(false, 95, 5), 100, 10),
            "a running request keeps its key"
        );
        assert!(reapable(&row(false, 50, 5), 100, 10), "a dead one does not");
    }

    #[test]
    fn each_state_of_a_key() {
        let (now, lock) = (1_000, 100);
        assert!(matches!(decide(None, "fp", now, lock), Decision::New));
        assert!(matches!(
            decide(Some(row(true, 0, 2_000)), "fp", now, lock),
            Decision::Replay(_)
        ));
        assert!(matches!(
            decide(Some(row(true, 0, 2_000)), "other", now, lock),
            Decision::KeyReused
        ));
        assert!(matches!(
            decide(Some(row(false, 950, 2_000)), "fp", now, lock),
            Decision::InProgress
        ));
        assert!(matches!(
            decide(Some(row(false, 950, 2_000)), "other", now, lock),
            Decision::KeyReused
        ));
        assert!(matches!(
            decide(Some(row(false, 900, 2_000)), "fp", now, lock),
            Decision::TakeOver { reservation } if reservation == "op_1"
        ));
        // Expired: new, even with another payload; but not while its lock lives.
        assert!(matches!(
            decide(Some(row(true, 0, 1_000)), "other", now, lock),
            Decision::New
        ));
        assert!(matches!(
            decide(Some(row(false, 0, 900)), "fp", now, lock),
            Decision::New
        ));
        assert!(matches!(
            decide(Some(row(false, 950, 900)), "fp", now, lock),
            Decision::InProgress
        ));
    }
}
