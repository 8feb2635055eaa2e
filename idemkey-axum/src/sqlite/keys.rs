//! The idempotency-key table on SQLite: look-up, phase 1 (reserve), phase 3
//! (complete, around the application's write), release, stale keys, takeover
//! and reaping.
//!
//! Phase 1 runs in one savepoint of the writer's `BEGIN IMMEDIATE` batch:
//! SQLite's database-wide write lock makes its read-then-write atomic, so two
//! requests can never both reserve one key. Phase 3 runs the application's
//! write and stores its response and the `done` state in one savepoint (all or nothing, in
//! one commit), and only if the caller still owns the lock.
//! Times are the host's clock, which is this embedded database's clock.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::SqliteCommit;
use crate::ids::new_id;
use crate::model::{
    self, completion, decide, reapable_sql, stale_sql, Completed, CompletionRow, Decision,
    KeyRequest, KeyRow, Lock, Lookup, Reserved, StaleKey, StoredResponse,
};

/// Reads `response_status, response_type, response_body, response_headers`
/// from `row`, starting at column `first`: `None` unless the first three are
/// set (only a `done` key has them).
fn stored_response(row: &Row, first: usize) -> rusqlite::Result<Option<StoredResponse>> {
    let (Some(status), Some(content_type), Some(body)) =
        (row.get(first)?, row.get(first + 1)?, row.get(first + 2)?)
    else {
        return Ok(None);
    };
    let text: Option<String> = row.get(first + 3)?;
    let headers = StoredResponse::parse_headers(text.as_deref()).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(first + 3, rusqlite::types::Type::Text, e.into())
    })?;
    Ok(Some(StoredResponse {
        status,
        content_type,
        headers,
        body,
    }))
}

fn key_row(conn: &Connection, customer: &str, key: &str) -> rusqlite::Result<Option<KeyRow>> {
    conn.prepare_cached(
        "SELECT fingerprint, reservation, state, locked_at, expires_at, response_status, response_type, response_body,
                response_headers, route
         FROM idempotency_keys WHERE customer = ?1 AND idem_key = ?2",
    )?
    .query_row(params![customer, key], |r| {
        let done = stored_response(r, 5)?;
        let state: String = r.get(2)?;
        Ok(KeyRow {
            route: r.get(9)?,
            fingerprint: r.get(0)?,
            reservation: r.get(1)?,
            done: if state == "done" { done } else { None },
            locked_at: r.get(3)?,
            expires_at: r.get(4)?,
        })
    })
    .optional()
}

/// The one-commit mode's read of a key this process holds, on a reader
/// connection: `None` when the request runs a new operation
/// ([`held`](crate::model::held)).
pub fn held(
    conn: &Connection,
    req: &KeyRequest,
    now: i64,
    lock_ms: i64,
) -> rusqlite::Result<Option<Lookup>> {
    let row = key_row(conn, &req.customer, &req.key)?;
    Ok(model::held(row, req, now, lock_ms))
}

/// The read-only look-up, on a reader connection (WAL: beside the writer).
pub fn lookup(
    conn: &Connection,
    req: &KeyRequest,
    now: i64,
    lock_ms: i64,
) -> rusqlite::Result<Lookup> {
    let row = key_row(conn, &req.customer, &req.key)?;
    Ok(model::lookup(row, req, now, lock_ms))
}

/// Phase 1 for a key that has no row: one `INSERT … ON CONFLICT DO
/// NOTHING`, no read first. `Some` when this call inserted the key (and now
/// holds it), `None` when the key has a row, which this leaves as it was.
pub fn insert_new(
    conn: &Connection,
    req: &KeyRequest,
    now: i64,
    ttl_ms: i64,
) -> rusqlite::Result<Option<Lock>> {
    let (reservation, owner) = (new_id("op"), new_id("lk"));
    let n = conn
        .prepare_cached(
            "INSERT INTO idempotency_keys
                 (customer, idem_key, fingerprint, reservation, state, lock_owner, locked_at, created_at, expires_at, route)
             VALUES (?1, ?2, ?3, ?4, 'in_progress', ?5, ?6, ?6, ?7, ?8)
             ON CONFLICT (customer, idem_key) DO NOTHING",
        )?
        .execute(params![req.customer, req.key, req.fingerprint, reservation, owner, now, now + ttl_ms, req.route])?;
    Ok((n == 1).then_some(Lock {
        reservation,
        owner,
        recovered: false,
    }))
}

/// Phase 1.
pub fn reserve(
    conn: &mut Connection,
    req: &KeyRequest,
    now: i64,
    ttl_ms: i64,
    lock_ms: i64,
) -> rusqlite::Result<Reserved> {
    let tx = conn.savepoint()?;
    let row = key_row(&tx, &req.customer, &req.key)?;
    let (reservation, recovered) = match decide(row, req, now, lock_ms) {
        Decision::Replay(r) => return Ok(Reserved::Replay(r)),
        Decision::KeyReused => return Ok(Reserved::KeyReused),
        Decision::InProgress => return Ok(Reserved::InProgress),
        Decision::New => (new_id("op"), false),
        // The request holding this key died between phases: take over its
        // operation (same reservation, so the provider dedups).
        Decision::TakeOver { reservation } => (reservation, true),
    };
    let owner = new_id("lk");
    tx.prepare_cached(
        "INSERT INTO idempotency_keys
             (customer, idem_key, fingerprint, reservation, state, lock_owner, locked_at, created_at, expires_at, route)
         VALUES (?1, ?2, ?3, ?4, 'in_progress', ?5, ?6, ?6, ?7, ?9)
         ON CONFLICT (customer, idem_key) DO UPDATE SET
             fingerprint = excluded.fingerprint, reservation = excluded.reservation, state = 'in_progress',
             lock_owner = excluded.lock_owner, locked_at = excluded.locked_at, route = excluded.route,
             created_at = CASE WHEN ?8 THEN created_at ELSE excluded.created_at END,
             -- A takeover keeps the first request's expiry, unless it passed:
             -- the operation's answer must outlive its last retry.
             expires_at = CASE WHEN ?8 THEN MAX(expires_at, excluded.expires_at) ELSE excluded.expires_at END,
             response_status = NULL, response_type = NULL, response_body = NULL,
             response_headers = NULL, charge_id = NULL",
    )?
    .execute(params![req.customer, req.key, req.fingerprint, reservation, owner, now, now + ttl_ms, recovered, req.route])?;
    tx.commit()?;
    Ok(Reserved::Proceed(Lock {
        reservation,
        owner,
        recovered,
    }))
}

/// Phase 3: the application's write + stored response + `done`, in one
/// transaction, if this request still owns the key.
///
/// Run it on the writer ([`Database::write`](super::Database::write)),
/// inside the savepoint each write gets there: an error rolls that back, and
/// releasing it releases the savepoint opened here, which only undoes a
/// write that comes back with nothing to store. Its statements are cached,
/// where rusqlite's `Savepoint` parses its own each time.
pub fn complete<W: SqliteCommit>(
    conn: &mut Connection,
    customer: &str,
    key: &str,
    lock: &Lock,
    write: W,
) -> rusqlite::Result<Completed> {
    conn.prepare_cached("SAVEPOINT complete")?.execute([])?;
    if let Some(answer) = completion(
        completion_row(conn, customer, key, &lock.reservation)?,
        lock,
    ) {
        return Ok(answer);
    }
    let Some((response, record_id)) = app_write(conn, key, write)? else {
        return Ok(Completed::LockLost);
    };
    conn.prepare_cached(
        "UPDATE idempotency_keys SET state = 'done', response_status = ?4, response_type = ?5,
             response_body = ?6, charge_id = ?7, response_headers = ?8
         WHERE customer = ?1 AND idem_key = ?2 AND lock_owner = ?3",
    )?
    .execute(params![
        customer,
        key,
        lock.owner,
        response.status,
        response.content_type,
        response.body,
        record_id,
        response.headers_text()
    ])?;
    Ok(Completed::Stored(response))
}

/// The one-commit mode's phase 3, for a key this process holds: the
/// application's write and the key's row, done under `operation_id`, in one
/// savepoint (as [`complete`]), where the key has no row or an expired done
/// one. A row that appeared meanwhile is answered as [`complete`] answers it.
pub fn complete_held<W: SqliteCommit>(
    conn: &mut Connection,
    req: &KeyRequest,
    operation_id: &str,
    now: i64,
    ttl_ms: i64,
    write: W,
) -> rusqlite::Result<Completed> {
    conn.prepare_cached("SAVEPOINT complete")?.execute([])?;
    let Some((response, record_id)) = app_write(conn, &req.key, write)? else {
        return Ok(Completed::LockLost);
    };
    let n = conn
        .prepare_cached(
            "INSERT INTO idempotency_keys
                 (customer, idem_key, fingerprint, reservation, state, lock_owner, locked_at, created_at,
                  expires_at, route, response_status, response_type, response_body, charge_id, response_headers)
             VALUES (?1, ?2, ?3, ?4, 'done', '', 0, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
             ON CONFLICT (customer, idem_key) DO UPDATE SET
                 fingerprint = excluded.fingerprint, reservation = excluded.reservation, state = 'done',
                 lock_owner = '', locked_at = 0, created_at = excluded.created_at,
                 expires_at = excluded.expires_at, route = excluded.route,
                 response_status = excluded.response_status, response_type = excluded.response_type,
                 response_body = excluded.response_body, charge_id = excluded.charge_id,
                 response_headers = excluded.response_headers
             WHERE idempotency_keys.state = 'done' AND idempotency_keys.expires_at <= ?5",
        )?
        .execute(params![
            req.customer,
            req.key,
            req.fingerprint,
            operation_id,
            now,
            now + ttl_ms,
            req.route,
            response.status,
            response.content_type,
            response.body,
            record_id,
            response.headers_text()
        ])?;
    if n == 1 {
        return Ok(Completed::Stored(response));
    }
    conn.prepare_cached("ROLLBACK TO complete")?.execute([])?;
    let lock = Lock {
        reservation: operation_id.to_string(),
        owner: String::new(),
        recovered: false,
    };
    let row = completion_row(conn, &req.customer, &req.key, operation_id)?;
    Ok(completion(row, &lock).unwrap_or(Completed::LockLost))
}

/// The key's row of operation `reservation`, as phase 3 judges it.
fn completion_row(
    conn: &Connection,
    customer: &str,
    key: &str,
    reservation: &str,
) -> rusqlite::Result<Option<CompletionRow>> {
    conn.prepare_cached(
        "SELECT state, lock_owner, response_status, response_type, response_body, response_headers
         FROM idempotency_keys WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3",
    )?
    .query_row(params![customer, key, reservation], |r| {
        Ok(CompletionRow {
            done: r.get::<_, String>(0)? == "done",
            owner: r.get(1)?,
            stored: stored_response(r, 2)?,
        })
    })
    .optional()
}

/// The application's write, inside the savepoint `complete`: the response to
/// store and its record id, or `None` (the savepoint rolled back) when the
/// write found its operation already recorded.
fn app_write<W: SqliteCommit>(
    conn: &mut Connection,
    key: &str,
    write: W,
) -> rusqlite::Result<Option<(StoredResponse, Option<String>)>> {
    let written = write.write(conn)?;
    let Some(response) = written.response else {
        conn.prepare_cached("ROLLBACK TO complete")?.execute([])?;
        tracing::error!(
            key,
            "the application's write found this operation already recorded"
        );
        return Ok(None);
    };
    Ok(Some((response, written.record_id)))
}

/// Gives up a lock (the reservation is kept).
pub fn release(
    conn: &mut Connection,
    customer: &str,
    key: &str,
    owner: &str,
) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE idempotency_keys SET locked_at = 0
         WHERE customer = ?1 AND idem_key = ?2 AND lock_owner = ?3 AND state = 'in_progress'",
        params![customer, key, owner],
    )?;
    Ok(())
}

/// `route`'s in-progress keys whose lock went stale, oldest lock first, at
/// most `limit`.
pub fn stale(
    conn: &Connection,
    route: &str,
    now: i64,
    lock_ms: i64,
    limit: usize,
) -> rusqlite::Result<Vec<StaleKey>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT route, customer, idem_key, reservation, expires_at <= ?1 FROM idempotency_keys
         WHERE route = ?4 AND {} ORDER BY locked_at LIMIT ?3",
        stale_sql("?1", "?2")
    ))?;
    let rows = stmt.query_map(params![now, lock_ms, limit as i64, route], |r| {
        Ok(StaleKey {
            route: r.get(0)?,
            principal: r.get(1)?,
            key: r.get(2)?,
            operation_id: r.get(3)?,
            expired: r.get(4)?,
        })
    })?;
    rows.collect()
}

/// Takes over a stale lock for server-side recovery, like phase 1 does for a
/// retry (and, like it, keeps the key until `ttl_ms` from now at least):
/// `None` when the key is no longer that stale operation.
pub fn take_over(
    conn: &mut Connection,
    k: &StaleKey,
    now: i64,
    ttl_ms: i64,
    lock_ms: i64,
) -> rusqlite::Result<Option<Lock>> {
    let owner = new_id("lk");
    let n = conn.execute(
        &format!(
            "UPDATE idempotency_keys SET lock_owner = ?4, locked_at = ?5,
                 expires_at = MAX(expires_at, ?5 + ?7)
             WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3 AND {}",
            stale_sql("?5", "?6")
        ),
        params![
            k.principal,
            k.key,
            k.operation_id,
            owner,
            now,
            lock_ms,
            ttl_ms
        ],
    )?;
    Ok((n == 1).then(|| Lock {
        reservation: k.operation_id.clone(),
        owner,
        recovered: true,
    }))
}

/// Deletes `k`, an unfinished operation that recovery learned never reached
/// the provider, if recovery's lock `owner` still holds it.
pub fn forget(conn: &mut Connection, k: &StaleKey, owner: &str) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "DELETE FROM idempotency_keys
         WHERE customer = ?1 AND idem_key = ?2 AND lock_owner = ?3 AND state = 'in_progress'",
        params![k.principal, k.key, owner],
    )?;
    Ok(n == 1)
}

/// Deletes the keys [`reapable`](crate::model::reapable) says may go.
pub fn reap(conn: &mut Connection, now: i64) -> rusqlite::Result<u64> {
    let n = conn.execute(
        &format!("DELETE FROM idempotency_keys WHERE {}", reapable_sql("?1")),
        params![now],
    )?;
    Ok(n as u64)
}
