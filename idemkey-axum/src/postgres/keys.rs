//! The idempotency-key table on PostgreSQL.
//!
//! Under READ COMMITTED a SELECT-then-INSERT would let two instances both see
//! no row and both run phase 2. So phase 1 starts with
//! `INSERT … ON CONFLICT DO NOTHING`: exactly one caller inserts a new key.
//! Any other caller locks the existing row with `SELECT … FOR UPDATE` and
//! judges it under that lock; the row stays locked until it has written its
//! decision. The reaper and takeovers claim rows with `FOR UPDATE SKIP LOCKED`
//! and never wait for a request that holds one. Every time is [`NOW_MS`].

use deadpool_postgres::{Client, GenericClient, Transaction};
use tokio_postgres::Row;

use super::schema::NOW_MS;
use super::PgCommit;
use crate::ids::new_id;
use crate::model::{
    self, completion, decide, reapable_sql, stale_sql, Completed, CompletionRow, Decision,
    KeyRequest, KeyRow, Lock, Lookup, Reserved, StaleKey, StoredResponse,
};
use crate::store::{StoreError, StoreResult};

/// Columns [`key_row`] reads, then the database's clock.
pub(super) fn select_row(lock: &str) -> String {
    format!(
        "SELECT fingerprint, reservation, state, locked_at, expires_at,
                response_status, response_type, response_body, response_headers, {NOW_MS}, route
         FROM idempotency_keys WHERE customer = $1 AND idem_key = $2 {lock}"
    )
}

/// Reads `response_status, response_type, response_body, response_headers`
/// from `r`, starting at column `first`: `None` unless the first three are
/// set (only a `done` key has them).
pub(super) fn stored_response(r: &Row, first: usize) -> StoreResult<Option<StoredResponse>> {
    let status: Option<i32> = r.try_get(first).map_err(StoreError::from)?;
    let ctype: Option<String> = r.try_get(first + 1).map_err(StoreError::from)?;
    let body: Option<Vec<u8>> = r.try_get(first + 2).map_err(StoreError::from)?;
    let (Some(s), Some(content_type), Some(body)) = (status, ctype, body) else {
        return Ok(None);
    };
    let text: Option<String> = r.try_get(first + 3).map_err(StoreError::from)?;
    Ok(Some(StoredResponse {
        status: u16::try_from(s).map_err(|_| StoreError::failed(format!("stored status {s}")))?,
        content_type,
        headers: StoredResponse::parse_headers(text.as_deref()).map_err(StoreError::failed)?,
        body,
    }))
}

/// The row and the database's clock.
pub(super) fn key_row(r: &Row) -> StoreResult<(KeyRow, i64)> {
    let state: String = r.try_get(2)?;
    let done = stored_response(r, 5)?;
    Ok((
        KeyRow {
            route: r.try_get(10)?,
            fingerprint: r.try_get(0)?,
            reservation: r.try_get(1)?,
            done: if state == "done" { done } else { None },
            locked_at: r.try_get(3)?,
            expires_at: r.try_get(4)?,
        },
        r.try_get(9)?,
    ))
}

/// The read-only look-up: a plain SELECT, which never waits for row locks.
pub async fn lookup(c: &impl GenericClient, req: &KeyRequest, lock_ms: i64) -> StoreResult<Lookup> {
    let stmt = c.prepare_cached(&select_row("")).await?;
    let row = c.query_opt(&stmt, &[&req.customer, &req.key]).await?;
    let Some(r) = row else {
        return Ok(Lookup::Free);
    };
    let (row, now) = key_row(&r)?;
    Ok(model::lookup(Some(row), req, now, lock_ms))
}

/// Phase 1, step one: the atomic insert of a key nobody has. `Some` when this
/// caller inserted it.
pub async fn insert_new(
    c: &impl GenericClient,
    req: &KeyRequest,
    ttl_ms: i64,
) -> StoreResult<Option<Lock>> {
    let stmt = c
        .prepare_cached(&format!(
            "INSERT INTO idempotency_keys
                 (customer, idem_key, fingerprint, reservation, state, lock_owner, locked_at, created_at, expires_at, route)
             VALUES ($1, $2, $3, $4, 'in_progress', $5, {NOW_MS}, {NOW_MS}, {NOW_MS} + $6, $7)
             ON CONFLICT (customer, idem_key) DO NOTHING"
        ))
        .await?;
    let (reservation, owner) = (new_id("op"), new_id("lk"));
    let n = c
        .execute(
            &stmt,
            &[
                &req.customer,
                &req.key,
                &req.fingerprint,
                &reservation,
                &owner,
                &ttl_ms,
                &req.route,
            ],
        )
        .await?;
    Ok((n == 1).then_some(Lock {
        reservation,
        owner,
        recovered: false,
    }))
}

/// Phase 1, step two (the key exists): lock the row, judge it, write the
/// decision, in the caller's transaction. `None`: the row vanished between
/// the two steps (reaped or reset); the caller starts again.
pub async fn reserve_existing(
    tx: &Transaction<'_>,
    req: &KeyRequest,
    ttl_ms: i64,
    lock_ms: i64,
) -> StoreResult<Option<Reserved>> {
    let stmt = tx.prepare_cached(&select_row("FOR UPDATE")).await?;
    let Some(r) = tx.query_opt(&stmt, &[&req.customer, &req.key]).await? else {
        return Ok(None);
    };
    let (row, now) = key_row(&r)?;
    let owner = new_id("lk");
    let lock = match decide(Some(row), req, now, lock_ms) {
        Decision::Replay(r) => return Ok(Some(Reserved::Replay(r))),
        Decision::KeyReused => return Ok(Some(Reserved::KeyReused)),
        Decision::InProgress => return Ok(Some(Reserved::InProgress)),
        Decision::New => {
            // Expired: a new operation under the old key.
            let reservation = new_id("op");
            let stmt = tx
                .prepare_cached(&format!(
                    "UPDATE idempotency_keys SET fingerprint = $3, reservation = $4, state = 'in_progress',
                         lock_owner = $5, locked_at = {NOW_MS}, created_at = {NOW_MS}, expires_at = {NOW_MS} + $6,
                         response_status = NULL, response_type = NULL, response_body = NULL,
                         response_headers = NULL, charge_id = NULL,
                         route = $7
                     WHERE customer = $1 AND idem_key = $2"
                ))
                .await?;
            tx.execute(
                &stmt,
                &[
                    &req.customer,
                    &req.key,
                    &req.fingerprint,
                    &reservation,
                    &owner,
                    &ttl_ms,
                    &req.route,
                ],
            )
            .await?;
            Lock {
                reservation,
                owner,
                recovered: false,
            }
        }
        Decision::TakeOver { reservation } => {
            let stmt = tx
                .prepare_cached(&format!(
                    "UPDATE idempotency_keys SET lock_owner = $3, locked_at = {NOW_MS}, route = $4,
                         expires_at = GREATEST(expires_at, {NOW_MS} + $5)
                     WHERE customer = $1 AND idem_key = $2"
                ))
                .await?;
            tx.execute(
                &stmt,
                &[&req.customer, &req.key, &owner, &req.route, &ttl_ms],
            )
            .await?;
            Lock {
                reservation,
                owner,
                recovered: true,
            }
        }
    };
    Ok(Some(Reserved::Proceed(lock)))
}

/// Phase 3 in the caller's transaction (the application's write, the stored
/// response, `done`); the caller commits on `Stored`, and rolls back
/// otherwise. The write runs first and the key is marked done only where
/// `lock` still owns it, in one statement (the row lock it takes is the
/// lock check): one round trip less than reading the row first. When the
/// lock is no longer this request's, the write is rolled back with the rest
/// and the row says what to answer.
pub async fn complete<W: PgCommit>(
    tx: &Client,
    customer: &str,
    key: &str,
    lock: &Lock,
    write: W,
) -> StoreResult<Completed> {
    let written = write.write(tx).await?;
    if let Some(response) = written.response {
        let stmt = tx
            .prepare_cached(
                "UPDATE idempotency_keys SET state = 'done', response_status = $5, response_type = $6,
                     response_body = $7, charge_id = $8, response_headers = $9
                 WHERE customer = $1 AND idem_key = $2 AND reservation = $3 AND lock_owner = $4
                     AND state = 'in_progress'",
            )
            .await?;
        let status = i32::from(response.status);
        let n = tx
            .execute(
                &stmt,
                &[
                    &customer,
                    &key,
                    &lock.reservation,
                    &lock.owner,
                    &status,
                    &response.content_type,
                    &response.body,
                    &written.record_id,
                    &response.headers_text(),
                ],
            )
            .await?;
        if n == 1 {
            return Ok(Completed::Stored(response));
        }
    } else {
        tracing::error!(
            key,
            "the application's write found this operation already recorded"
        );
    }
    let row = completion_row(tx, customer, key, &lock.reservation).await?;
    // Still this request's (the write found its operation recorded): lost.
    Ok(completion(row, lock).unwrap_or(Completed::LockLost))
}

/// The key's row of operation `reservation`, as phase 3 judges it.
pub(super) async fn completion_row(
    c: &impl GenericClient,
    customer: &str,
    key: &str,
    reservation: &str,
) -> StoreResult<Option<CompletionRow>> {
    let stmt = c
        .prepare_cached(
            "SELECT state, lock_owner, response_status, response_type, response_body, response_headers
             FROM idempotency_keys WHERE customer = $1 AND idem_key = $2 AND reservation = $3",
        )
        .await?;
    let Some(r) = c.query_opt(&stmt, &[&customer, &key, &reservation]).await? else {
        return Ok(None);
    };
    Ok(Some(CompletionRow {
        done: r.try_get::<_, String>(0)? == "done",
        owner: r.try_get(1)?,
        stored: stored_response(&r, 2)?,
    }))
}

/// Gives up a lock (the reservation is kept).
pub async fn release(
    c: &impl GenericClient,
    customer: &str,
    key: &str,
    owner: &str,
) -> StoreResult<()> {
    let stmt = c
        .prepare_cached(
            "UPDATE idempotency_keys SET locked_at = 0
             WHERE customer = $1 AND idem_key = $2 AND lock_owner = $3 AND state = 'in_progress'",
        )
        .await?;
    c.execute(&stmt, &[&customer, &key, &owner]).await?;
    Ok(())
}

/// `route`'s in-progress keys whose lock went stale, oldest lock first.
pub async fn stale(
    c: &impl GenericClient,
    route: &str,
    lock_ms: i64,
    limit: usize,
) -> StoreResult<Vec<StaleKey>> {
    let stmt = c
        .prepare_cached(&format!(
            "SELECT route, customer, idem_key, reservation, expires_at <= {NOW_MS}
             FROM idempotency_keys
             WHERE route = $3 AND {} ORDER BY locked_at LIMIT $2",
            stale_sql(NOW_MS, "$1")
        ))
        .await?;
    let rows = c.query(&stmt, &[&lock_ms, &(limit as i64), &route]).await?;
    rows.iter()
        .map(|r| {
            Ok(StaleKey {
                route: r.try_get(0)?,
                principal: r.try_get(1)?,
                key: r.try_get(2)?,
                operation_id: r.try_get(3)?,
                expired: r.try_get(4)?,
            })
        })
        .collect()
}

/// Claims a stale lock (keeping the key one TTL from now at least),
/// skipping a row another transaction holds.
pub async fn take_over(
    c: &impl GenericClient,
    k: &StaleKey,
    ttl_ms: i64,
    lock_ms: i64,
) -> StoreResult<Option<Lock>> {
    let stmt = c
        .prepare_cached(&format!(
            "UPDATE idempotency_keys k SET lock_owner = $4, locked_at = {NOW_MS},
                 expires_at = GREATEST(k.expires_at, {NOW_MS} + $6)
             FROM (SELECT customer, idem_key FROM idempotency_keys
                   WHERE customer = $1 AND idem_key = $2 AND reservation = $3 AND {}
                   FOR UPDATE SKIP LOCKED) s
             WHERE k.customer = s.customer AND k.idem_key = s.idem_key",
            stale_sql(NOW_MS, "$5")
        ))
        .await?;
    let owner = new_id("lk");
    let n = c
        .execute(
            &stmt,
            &[
                &k.principal,
                &k.key,
                &k.operation_id,
                &owner,
                &lock_ms,
                &ttl_ms,
            ],
        )
        .await?;
    Ok((n == 1).then(|| Lock {
        reservation: k.operation_id.clone(),
        owner,
        recovered: true,
    }))
}

/// Deletes `k`, an unfinished operation that recovery learned never reached
/// the provider, if recovery's lock `owner` still holds it.
pub async fn forget(c: &impl GenericClient, k: &StaleKey, owner: &str) -> StoreResult<bool> {
    let stmt = c
        .prepare_cached(
            "DELETE FROM idempotency_keys
             WHERE customer = $1 AND idem_key = $2 AND lock_owner = $3 AND state = 'in_progress'",
        )
        .await?;
    Ok(c.execute(&stmt, &[&k.principal, &k.key, &owner]).await? == 1)
}

/// Deletes up to `limit` of the keys [`reapable`](crate::model::reapable)
/// says may go, skipping rows another transaction holds.
pub async fn reap(c: &impl GenericClient, limit: i64) -> StoreResult<u64> {
    let stmt = c
        .prepare_cached(&format!(
            "DELETE FROM idempotency_keys WHERE (customer, idem_key) IN (
                 SELECT customer, idem_key FROM idempotency_keys
                 WHERE {} LIMIT $1 FOR UPDATE SKIP LOCKED)",
            reapable_sql(NOW_MS)
        ))
        .await?;
    Ok(c.execute(&stmt, &[&limit]).await?)
}
