//! The idempotency-key table: phase 1 (reserve) and phase 3 (complete).
//!
//! Phase 1 decides, in one `BEGIN IMMEDIATE` transaction, what a request with a
//! key is: new work (the key is inserted as `in_progress` and locked), the
//! recovery of work whose request died (the lock is older than
//! `--lock-timeout`: it is taken over, keeping the reservation id so the
//! provider answers with its first result), a replay, a 422 or a 409.
//! Phase 3 writes the charge, the stored response and the `done` state in one
//! transaction, and only if this request still owns the lock.

use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};

use crate::faults::Fault;
use crate::http::problem::{ApiError, ApiResult};
use crate::ids::new_id;
use crate::store::sqlite::ledger::{self, Charge};

/// A final answer as stored for replay: sent again byte for byte.
#[derive(Debug, Clone)]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// Content-Type header value.
    pub content_type: String,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl StoredResponse {
    /// The `201` answer that creates `charge`: its JSON.
    pub fn created(charge: &Charge) -> ApiResult<StoredResponse> {
        let body = serde_json::to_vec(charge).map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok(StoredResponse {
            status: 201,
            content_type: "application/json".into(),
            body,
        })
    }
}

/// Reads `response_status, response_type, response_body` from `row`, starting
/// at column `first`: `None` unless all three are set (only a `done` key has
/// them).
fn stored_response(row: &Row, first: usize) -> rusqlite::Result<Option<StoredResponse>> {
    Ok(
        match (row.get(first)?, row.get(first + 1)?, row.get(first + 2)?) {
            (Some(status), Some(content_type), Some(body)) => Some(StoredResponse {
                status,
                content_type,
                body,
            }),
            _ => None,
        },
    )
}

/// What phase 1 found.
#[derive(Debug)]
pub enum Reserved {
    /// This request owns the key now and must do the work.
    Proceed(Lock),
    /// The key is done: answer with its stored response.
    Replay(StoredResponse),
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
    /// The fault (if any) scheduled for this request.
    pub fault: Option<Fault>,
}

/// Inputs of phase 1.
pub struct ReserveArgs {
    /// Customer scope.
    pub customer: String,
    /// The client's key.
    pub key: String,
    /// Payload fingerprint.
    pub fingerprint: String,
    /// Now, in ms.
    pub now: i64,
    /// `--key-ttl` in ms.
    pub ttl_ms: i64,
    /// `--lock-timeout` in ms.
    pub lock_ms: i64,
}

/// Phase 1. `take_fault` is called only when the request will do work, so
/// replays, 409s and 422s never consume a scheduled fault.
pub fn reserve(
    conn: &mut Connection,
    a: &ReserveArgs,
    take_fault: impl FnOnce() -> Option<Fault>,
) -> ApiResult<Reserved> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let row = tx
        .query_row(
            "SELECT fingerprint, reservation, state, locked_at, expires_at, response_status, response_type, response_body
             FROM idempotency_keys WHERE customer = ?1 AND idem_key = ?2",
            params![a.customer, a.key],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                    stored_response(r, 5)?,
                ))
            },
        )
        .optional()?;

    let owner = new_id("lk");
    let mut reservation = new_id("op");
    let mut recovered = false;
    if let Some((fp, res, state, locked_at, expires_at, stored)) = row {
        let lock_live = state == "in_progress" && locked_at + a.lock_ms > a.now;
        if expires_at > a.now || lock_live {
            if fp != a.fingerprint {
                return Err(ApiError::KeyReused);
            }
            if state == "done" {
                return stored.map(Reserved::Replay).ok_or_else(|| {
                    ApiError::Internal("done key without a stored response".into())
                });
            }
            if lock_live {
                return Err(ApiError::InProgress);
            }
            // The request holding this key died between phases: take over its
            // operation (same reservation, so the provider dedups).
            reservation = res;
            recovered = true;
        }
        // else: expired. After the TTL the key is a new operation (the row is
        // replaced below, whether or not the reaper got to it yet).
    }

    let fault = take_fault();
    if let Some(e) = fault.as_ref().and_then(Fault::before_commit) {
        // fail-before-commit, drop-before-commit, respond: rolled back on
        // drop, nothing is stored.
        return Err(e);
    }
    tx.execute(
        "INSERT INTO idempotency_keys
             (customer, idem_key, fingerprint, reservation, state, lock_owner, locked_at, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, 'in_progress', ?5, ?6, ?6, ?7)
         ON CONFLICT (customer, idem_key) DO UPDATE SET
             fingerprint = excluded.fingerprint, reservation = excluded.reservation, state = 'in_progress',
             lock_owner = excluded.lock_owner, locked_at = excluded.locked_at,
             created_at = CASE WHEN ?8 THEN created_at ELSE excluded.created_at END,
             expires_at = CASE WHEN ?8 THEN expires_at ELSE excluded.expires_at END,
             response_status = NULL, response_type = NULL, response_body = NULL, charge_id = NULL",
        params![a.customer, a.key, a.fingerprint, reservation, owner, a.now, a.now + a.ttl_ms, recovered],
    )?;
    tx.commit()?;
    Ok(Reserved::Proceed(Lock {
        reservation,
        owner,
        recovered,
        fault,
    }))
}

/// Result of phase 3.
#[derive(Debug)]
pub enum Completed {
    /// Committed by this request.
    Stored(StoredResponse),
    /// Another request (which took over after our lock went stale) finished
    /// first; this is its stored answer.
    AlreadyDone(StoredResponse),
}

/// What phase 3 stores: an approved charge (with the body that describes it),
/// or a final answer without a charge (a decline).
pub enum Outcome {
    /// Insert this charge; answer 201 with its JSON.
    Charge(Charge),
    /// Store and answer this response; no charge.
    Answer(StoredResponse),
}

/// Phase 3: charge + stored response + `done`, in one transaction, if this
/// request still owns the key.
pub fn complete(
    conn: &mut Connection,
    customer: &str,
    key: &str,
    lock: &Lock,
    outcome: Outcome,
) -> ApiResult<Completed> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let row = tx
        .query_row(
            "SELECT state, lock_owner, response_status, response_type, response_body
             FROM idempotency_keys WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3",
            params![customer, key, lock.reservation],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    stored_response(r, 2)?,
                ))
            },
        )
        .optional()?;
    match row {
        Some((state, owner, _)) if state == "in_progress" && owner == lock.owner => {}
        Some((state, _, Some(stored))) if state == "done" => {
            return Ok(Completed::AlreadyDone(stored));
        }
        // Taken over by another request that is still running, or the key was
        // deleted (ledger reset): the client should retry.
        _ => return Err(ApiError::InProgress),
    }
    let (response, charge_id) = match outcome {
        Outcome::Charge(charge) => {
            ledger::insert(&tx, &charge).map_err(|e| match e {
                // UNIQUE(reservation): the last line of defence against a
                // second charge for one operation.
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    tracing::error!(
                        key,
                        "second charge for one operation refused by UNIQUE constraint"
                    );
                    ApiError::InProgress
                }
                e => ApiError::Storage(e),
            })?;
            (StoredResponse::created(&charge)?, Some(charge.id))
        }
        Outcome::Answer(resp) => (resp, None),
    };
    tx.execute(
        "UPDATE idempotency_keys SET state = 'done', response_status = ?4, response_type = ?5,
             response_body = ?6, charge_id = ?7
         WHERE customer = ?1 AND idem_key = ?2 AND lock_owner = ?3",
        params![
            customer,
            key,
            lock.owner,
            response.status,
            response.content_type,
            response.body,
            charge_id
        ],
    )?;
    tx.commit()?;
    Ok(Completed::Stored(response))
}

/// Gives up a lock after a failure, so the next try takes over at once
/// instead of waiting for `--lock-timeout` (the reservation is kept).
pub fn release(conn: &mut Connection, customer: &str, key: &str, owner: &str) -> ApiResult<()> {
    conn.execute(
        "UPDATE idempotency_keys SET locked_at = 0
         WHERE customer = ?1 AND idem_key = ?2 AND lock_owner = ?3 AND state = 'in_progress'",
        params![customer, key, owner],
    )?;
    Ok(())
}

/// An in-progress key whose lock is older than `--lock-timeout`.
#[derive(Debug, Clone)]
pub struct StaleKey {
    /// Customer scope.
    pub customer: String,
    /// The client's key.
    pub key: String,
    /// The operation the dead request was doing.
    pub reservation: String,
}

/// In-progress keys whose lock went stale (their request died or gave up),
/// oldest lock first, at most `limit`.
pub fn stale(conn: &Connection, now: i64, lock_ms: i64, limit: usize) -> ApiResult<Vec<StaleKey>> {
    let mut stmt = conn.prepare_cached(
        "SELECT customer, idem_key, reservation FROM idempotency_keys
         WHERE state = 'in_progress' AND locked_at + ?2 <= ?1
         ORDER BY locked_at LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![now, lock_ms, limit as i64], |r| {
        Ok(StaleKey {
            customer: r.get(0)?,
            key: r.get(1)?,
            reservation: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// Takes over a stale lock for server-side recovery, like phase 1 does for a
/// retry: `None` when the key is no longer that stale operation (a retry or
/// another recovery got there first, or it completed).
pub fn take_over(
    conn: &mut Connection,
    k: &StaleKey,
    now: i64,
    lock_ms: i64,
) -> ApiResult<Option<Lock>> {
    let owner = new_id("lk");
    let n = conn.execute(
        "UPDATE idempotency_keys SET lock_owner = ?4, locked_at = ?5
         WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3
           AND state = 'in_progress' AND locked_at + ?6 <= ?5",
        params![k.customer, k.key, k.reservation, owner, now, lock_ms],
    )?;
    Ok((n == 1).then(|| Lock {
        reservation: k.reservation.clone(),
        owner,
        recovered: true,
        fault: None,
    }))
}

/// Deletes expired keys (not those whose request is still running). Returns
/// how many were deleted.
pub fn reap(conn: &mut Connection, now: i64, lock_ms: i64) -> ApiResult<usize> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let n = tx.execute(
        "DELETE FROM idempotency_keys
         WHERE expires_at <= ?1 AND (state = 'done' OR locked_at + ?2 <= ?1)",
        params![now, lock_ms],
    )?;
    tx.commit()?;
    Ok(n)
}
