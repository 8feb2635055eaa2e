//! The one-commit mode on PostgreSQL: a key is held by a transaction-scoped
//! advisory lock (`pg_try_advisory_xact_lock`) of a transaction that stays
//! open from phase 1 to phase 3, on a pooled connection that a task of its
//! own owns. Every instance on the database sees the lock; a process that
//! dies lets go of it with its connection; phase 3 commits the application's
//! write and the key's row, done, in that same transaction, whose commit lets
//! go of the lock. A request that goes away (its [`HeldKey`] dropped) rolls
//! the transaction back; so does one that has not committed within the lock
//! timeout (its phase 2 hangs), which frees the key and the connection and
//! makes that request's late commit fail. The transaction also sets
//! `idle_in_transaction_session_timeout` to the lock timeout and the op
//! timeout together, so the database ends it if this process stops
//! answering.

use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::Pool;
use futures_util::future::{join, try_join3};
use tokio::sync::oneshot;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::begun::Begun;
use super::keys::{completion_row, key_row, select_row};
use super::schema::NOW_MS;
use super::{bounded_by, PgCommit};
use crate::hold::{HeldKey, Hold};
use crate::ids::key_number;
use crate::model::{self, completion, Completed, KeyRequest, Lock, Lookup};
use crate::store::{StoreError, StoreResult, Timing};

/// Phase 3's inputs, sent to the task that holds the key, and where its
/// outcome goes.
type Commit<W> = (W, String, oneshot::Sender<StoreResult<Completed>>);

/// A key held by the task that owns its transaction.
struct PgHeld<W> {
    commit: oneshot::Sender<Commit<W>>,
}

#[async_trait]
impl<W: PgCommit> HeldKey<W> for PgHeld<W> {
    async fn complete(
        self: Box<Self>,
        _req: &KeyRequest,
        operation_id: &str,
        write: W,
    ) -> StoreResult<Completed> {
        let (done, outcome) = oneshot::channel();
        if self
            .commit
            .send((write, operation_id.to_string(), done))
            .is_err()
        {
            return Err(StoreError::unavailable("the key's transaction ended"));
        }
        outcome
            .await
            .unwrap_or_else(|_| Err(StoreError::unavailable("the key's transaction ended")))
    }
}

/// [`KeyStore::hold`](crate::KeyStore::hold) on `pool`: the task that holds
/// the key runs to its end whatever its caller does; a hold nobody takes, or
/// nobody commits within `timing`'s lock timeout, is rolled back. Each
/// statement is bounded by `limit`.
pub(super) async fn hold<W: PgCommit>(
    pool: Pool,
    req: KeyRequest,
    timing: Timing,
    limit: Duration,
) -> StoreResult<Hold<W>> {
    let (answer, answered) = oneshot::channel();
    tokio::spawn(run(pool, req, timing, limit, answer));
    answered
        .await
        .unwrap_or_else(|_| Err(StoreError::failed("the key's hold stopped before its end")))
}

/// The task: begins the transaction, takes the lock, reads the row and
/// answers; then waits for phase 3, runs it and commits. It rolls back
/// wherever it stops before that; a transaction dropped still open closes
/// its connection ([`Begun`]).
async fn run<W: PgCommit>(
    pool: Pool,
    req: KeyRequest,
    timing: Timing,
    limit: Duration,
    answer: oneshot::Sender<StoreResult<Hold<W>>>,
) {
    let mut tx = match bounded_by(limit, async { Ok(pool.get().await?) }).await {
        Ok(c) => Begun::new(c),
        Err(e) => return drop(answer.send(Err(e))),
    };
    let idle_limit = timing.lock_timeout() + limit;
    let (commit, over_row) =
        match bounded_by(limit, read(&tx, &req, timing.lock_ms(), idle_limit)).await {
            Err(e) => return drop(answer.send(Err(e))),
            Ok(Found::Answered(found)) => {
                // The lock goes with the transaction: let go of it before answering, or the
                // caller's next request of this key, sent at once, can find it still held.
                let _ = bounded_by(limit, tx.end("ROLLBACK")).await;
                return drop(answer.send(Ok(Hold::Answered(found))));
            }
            Ok(Found::New { row }) => {
                let (commit, to_commit) = oneshot::channel();
                if answer
                    .send(Ok(Hold::Proceed(Box::new(PgHeld { commit }))))
                    .is_err()
                {
                    let _ = bounded_by(limit, tx.end("ROLLBACK")).await;
                    return; // the caller is gone
                }
                (to_commit, row)
            }
        };
    // Phase 2 runs in the handler meanwhile; an Operation dropped, or one
    // still running after the lock timeout, ends it here.
    let Ok(Ok((write, operation_id, done))) =
        tokio::time::timeout(timing.lock_timeout(), commit).await
    else {
        let _ = bounded_by(limit, tx.end("ROLLBACK")).await;
        return;
    };
    let outcome = bounded_by(
        limit,
        finish(tx, &req, &operation_id, timing.ttl_ms(), write, over_row),
    )
    .await;
    let _ = done.send(outcome);
}

/// What a held key's row says.
enum Found {
    /// A new operation; `row`: over an expired done row.
    New { row: bool },
    /// What the key answers instead ([`held`](crate::model::held)).
    Answered(Lookup),
}

/// Takes the key's lock and reads its row; [`Lookup::InProgress`] when
/// another transaction holds the lock. The transaction is ended by the
/// database once idle for `idle_limit`.
async fn read(
    tx: &Begun,
    req: &KeyRequest,
    lock_ms: i64,
    idle_limit: Duration,
) -> StoreResult<Found> {
    let c = tx.client();
    let lock = c
        .prepare_cached(
            "SELECT pg_try_advisory_xact_lock($1),
                    set_config('idle_in_transaction_session_timeout', $2, true)",
        )
        .await?;
    // The setting counts milliseconds in an i32 (about 24.8 days); a longer
    // bound is as good as that one.
    let idle_ms = idle_limit.as_millis().min(i32::MAX as u128).to_string();
    let row = c.prepare_cached(&select_row("")).await?;
    let number = key_number(&req.customer, &req.key);
    // One round trip: the BEGIN, the lock, the row. The row's statement runs
    // after the lock's, with a snapshot of its own: it sees every commit made
    // before the lock was granted, the last holder's included.
    let ((), locked, found) = try_join3(
        c.batch_execute("BEGIN"),
        c.query_one(&lock, &[&number, &idle_ms]),
        c.query_opt(&row, &[&req.customer, &req.key]),
    )
    .await?;
    if !locked.try_get::<_, bool>(0)? {
        return Ok(Found::Answered(Lookup::InProgress));
    }
    let Some(r) = found else {
        return Ok(Found::New { row: false });
    };
    let (row, now) = key_row(&r)?;
    Ok(match model::held(Some(row), req, now, lock_ms) {
        Some(found) => Found::Answered(found),
        None => Found::New { row: true },
    })
}

/// The statement that writes the key's row, done, from `$1` to `$11`, with
/// `on_conflict` at its end.
fn insert_done(on_conflict: &str) -> String {
    format!(
        "INSERT INTO idempotency_keys
             (customer, idem_key, fingerprint, reservation, state, lock_owner, locked_at, created_at,
              expires_at, route, response_status, response_type, response_body, charge_id, response_headers)
         VALUES ($1, $2, $3, $4, 'done', '', 0, {NOW_MS}, {NOW_MS} + $5, $6, $7, $8, $9, $10, $11)
         {on_conflict}"
    )
}

/// Phase 3 in the held transaction: the application's write and the key's
/// row, done; committed, or rolled back with the write when the key has a
/// row after all (a request of the two-commit mode wrote it meanwhile),
/// which is then answered as that mode's phase 3 answers it. `over_row`:
/// the key had an expired done row, which the new one replaces.
async fn finish<W: PgCommit>(
    mut tx: Begun,
    req: &KeyRequest,
    operation_id: &str,
    ttl_ms: i64,
    write: W,
    over_row: bool,
) -> StoreResult<Completed> {
    let written = match write.write(tx.client()).await {
        Ok(written) => written,
        Err(e) => {
            let _ = tx.end("ROLLBACK").await;
            return Err(e);
        }
    };
    let Some(response) = written.response else {
        tracing::error!(
            key = req.key,
            "the application's write found this operation already recorded"
        );
        tx.end("ROLLBACK").await?;
        return Ok(Completed::LockLost);
    };
    let status = i32::from(response.status);
    let headers = response.headers_text();
    let params: [&(dyn ToSql + Sync); 11] = [
        &req.customer,
        &req.key,
        &req.fingerprint,
        &operation_id,
        &ttl_ms,
        &req.route,
        &status,
        &response.content_type,
        &response.body,
        &written.record_id,
        &headers,
    ];
    let c = tx.client();
    if over_row {
        let stmt = c
            .prepare_cached(&insert_done(&format!(
                "ON CONFLICT (customer, idem_key) DO UPDATE SET
                     fingerprint = EXCLUDED.fingerprint, reservation = EXCLUDED.reservation,
                     state = 'done', lock_owner = '', locked_at = 0, created_at = EXCLUDED.created_at,
                     expires_at = EXCLUDED.expires_at, route = EXCLUDED.route,
                     response_status = EXCLUDED.response_status, response_type = EXCLUDED.response_type,
                     response_body = EXCLUDED.response_body, charge_id = EXCLUDED.charge_id,
                     response_headers = EXCLUDED.response_headers
                 WHERE idempotency_keys.state = 'done' AND idempotency_keys.expires_at <= {NOW_MS}"
            )))
            .await?;
        if c.execute(&stmt, &params).await? == 1 {
            tx.end("COMMIT").await?;
            return Ok(Completed::Stored(response));
        }
        tx.end("ROLLBACK").await?;
    } else {
        // The key had no row: a plain INSERT, and the COMMIT in the same
        // round trip. A row that appeared meanwhile fails the INSERT, which
        // aborts the transaction, and the COMMIT then rolls it back, the
        // application's write with it. Either way the COMMIT, answered,
        // ended the transaction.
        let stmt = c.prepare_cached(&insert_done("")).await?;
        let (inserted, committed) =
            join(c.execute(&stmt, &params), c.batch_execute("COMMIT")).await;
        committed?;
        tx.ended();
        match inserted {
            Ok(_) => return Ok(Completed::Stored(response)),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Out of the transaction: the row another request committed.
    let row = completion_row(tx.client(), &req.customer, &req.key, operation_id).await?;
    let lock = Lock {
        reservation: operation_id.to_string(),
        owner: String::new(),
        recovered: false,
    };
    Ok(completion(row, &lock).unwrap_or(Completed::LockLost))
}
