//! The outbox on SQLite: the event insert of phase 3, and the relay's and
//! consumer's statements.
//!
//! Every time is SQLite's own clock (`unixepoch('subsec')`), read inside the
//! statement, so every process on the file measures claims and ages alike.
//! Each write is a savepoint in the writer's `BEGIN IMMEDIATE` batch; SQLite's
//! single writer makes two claims of one event impossible. A worker with nothing to do
//! looks on a read connection first, so an idle relay never queues behind
//! (or in front of) the charges for the write lock.

use async_trait::async_trait;
use rusqlite::{params, Connection};

use crate::outbox::event::{
    expired, Consumed, Event, EventState, EventView, NewEvent, Receipt, ReceiptsView,
    CHARGE_SUCCEEDED,
};
use crate::outbox::storage::OutboxStorage;
use crate::store::sqlite::SqliteStore;
use crate::store::StoreResult;

/// The outbox, the consumer's processed ids and the mailer stand-in.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS outbox_events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT    NOT NULL UNIQUE,
    kind         TEXT    NOT NULL,
    customer     TEXT    NOT NULL,
    charge_id    TEXT    NOT NULL UNIQUE,  -- one event per charge
    amount       INTEGER NOT NULL,
    currency     TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,         -- ms, SQLite's clock
    available_at INTEGER NOT NULL,         -- not claimed before (retry delay)
    claimed_by   TEXT,
    claimed_at   INTEGER,
    attempts     INTEGER NOT NULL DEFAULT 0,
    failures     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    delivered_at INTEGER,                  -- the ack
    dead_at      INTEGER                   -- parked: past the redelivery window
);
CREATE INDEX IF NOT EXISTS outbox_events_open ON outbox_events (seq)
    WHERE delivered_at IS NULL AND dead_at IS NULL;
CREATE INDEX IF NOT EXISTS outbox_events_customer ON outbox_events (customer, seq);
CREATE INDEX IF NOT EXISTS outbox_events_delivered ON outbox_events (delivered_at);

CREATE TABLE IF NOT EXISTS processed_events (
    event_id     TEXT    PRIMARY KEY,
    processed_at INTEGER NOT NULL,
    duplicates   INTEGER NOT NULL DEFAULT 0  -- redeliveries skipped
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS processed_events_age ON processed_events (processed_at);

-- The mailer stand-in: one row per e-mail sent. No UNIQUE on event_id, on
-- purpose: a mailer does not deduplicate, processed_events does.
CREATE TABLE IF NOT EXISTS receipts (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL UNIQUE,
    event_id   TEXT    NOT NULL,
    charge_id  TEXT    NOT NULL,
    customer   TEXT    NOT NULL,
    amount     INTEGER NOT NULL,
    currency   TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS receipts_customer ON receipts (customer, seq);
";

/// SQLite's clock in ms since the epoch.
const NOW: &str = "CAST(unixepoch('subsec') * 1000 AS INTEGER)";

/// The claimable condition; `timeout` is the placeholder of the claim
/// timeout in ms.
fn claimable(timeout: &str) -> String {
    format!(
        "delivered_at IS NULL AND dead_at IS NULL AND available_at <= {NOW}
         AND (claimed_at IS NULL OR claimed_at <= {NOW} - {timeout})"
    )
}

/// The `charge.succeeded` event of a charge, inside the charge's own
/// transaction (phase 3, and the naive endpoint's insert).
pub fn insert_event(conn: &Connection, e: &NewEvent) -> rusqlite::Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO outbox_events (id, kind, customer, charge_id, amount, currency, created_at, available_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, {NOW}, {NOW})"
    ))?
    .execute(params![e.id, CHARGE_SUCCEEDED, e.customer, e.charge_id, e.amount as i64, e.currency])?;
    Ok(())
}

/// Deletes a customer's events, receipts and the processed ids of its events.
pub fn delete_customer(tx: &Connection, customer: &str) -> rusqlite::Result<usize> {
    tx.execute(
        "DELETE FROM processed_events WHERE event_id IN (SELECT id FROM outbox_events WHERE customer = ?1)",
        params![customer],
    )?;
    tx.execute(
        "DELETE FROM outbox_events WHERE customer = ?1",
        params![customer],
    )?;
    tx.execute(
        "DELETE FROM receipts WHERE customer = ?1",
        params![customer],
    )
}

fn any_claimable(conn: &Connection, claim_timeout_ms: i64) -> rusqlite::Result<bool> {
    let sql = format!(
        "SELECT EXISTS (SELECT 1 FROM outbox_events WHERE {})",
        claimable("?1")
    );
    conn.prepare_cached(&sql)?
        .query_row(params![claim_timeout_ms], |r| r.get(0))
}

fn claim(
    conn: &mut Connection,
    worker: &str,
    limit: usize,
    claim_timeout_ms: i64,
) -> rusqlite::Result<Vec<Event>> {
    let tx = conn.savepoint()?;
    let mut rows = {
        let mut stmt = tx.prepare_cached(&format!(
            "UPDATE outbox_events SET claimed_by = ?1, claimed_at = {NOW}, attempts = attempts + 1
             WHERE seq IN (SELECT seq FROM outbox_events WHERE {} ORDER BY seq LIMIT ?3)
             RETURNING seq, id, customer, charge_id, amount, currency, created_at, attempts",
            claimable("?2")
        ))?;
        let rows = stmt.query_map(params![worker, claim_timeout_ms, limit as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                Event {
                    id: r.get(1)?,
                    customer: r.get(2)?,
                    charge_id: r.get(3)?,
                    amount: r.get::<_, i64>(4)? as u64,
                    currency: r.get(5)?,
                    created_at: r.get(6)?,
                    attempts: r.get(7)?,
                },
            ))
        })?;
        rows.collect::<Result<Vec<_>, _>>()?
    };
    tx.commit()?;
    // RETURNING promises no order.
    rows.sort_by_key(|(seq, _)| *seq);
    Ok(rows.into_iter().map(|(_, e)| e).collect())
}

fn consume(
    conn: &mut Connection,
    events: &[Event],
    max_age_ms: i64,
) -> rusqlite::Result<Vec<Consumed>> {
    let tx = conn.savepoint()?;
    let now: i64 = tx.query_row(&format!("SELECT {NOW}"), [], |r| r.get(0))?;
    let mut out = Vec::with_capacity(events.len());
    for ev in events {
        if expired(ev, now, max_age_ms) {
            out.push(Consumed::Expired);
            continue;
        }
        // The id and the receipt commit together; a seen id only counts.
        let duplicates: i64 = tx
            .prepare_cached(
                "INSERT INTO processed_events (event_id, processed_at) VALUES (?1, ?2)
                 ON CONFLICT (event_id) DO UPDATE SET duplicates = duplicates + 1
                 RETURNING duplicates",
            )?
            .query_row(params![ev.id, now], |r| r.get(0))?;
        let consumed = Consumed::after_mark(ev, now, duplicates);
        if let Consumed::Written(receipt) = &consumed {
            tx.prepare_cached(
                "INSERT INTO receipts (id, event_id, charge_id, customer, amount, currency, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                receipt.id,
                receipt.event_id,
                receipt.charge_id,
                receipt.customer,
                receipt.amount as i64,
                receipt.currency,
                receipt.created_at
            ])?;
        }
        out.push(consumed);
    }
    tx.commit()?;
    Ok(out)
}

fn ack(conn: &mut Connection, ids: &[String]) -> rusqlite::Result<()> {
    let tx = conn.savepoint()?;
    {
        let mut stmt = tx.prepare_cached(&format!(
            "UPDATE outbox_events SET delivered_at = {NOW} WHERE id = ?1 AND delivered_at IS NULL"
        ))?;
        for id in ids {
            stmt.execute(params![id])?;
        }
    }
    tx.commit()?;
    Ok(())
}

fn release(
    conn: &mut Connection,
    id: &str,
    worker: &str,
    error: &str,
    retry_in_ms: i64,
) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "UPDATE outbox_events SET claimed_by = NULL, claimed_at = NULL, failures = failures + 1,
                 last_error = ?3, available_at = {NOW} + ?4
             WHERE id = ?1 AND claimed_by = ?2 AND delivered_at IS NULL"
        ),
        params![id, worker, error, retry_in_ms],
    )?;
    Ok(())
}

fn park(conn: &mut Connection, id: &str, reason: &str) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "UPDATE outbox_events SET dead_at = {NOW}, last_error = ?2
             WHERE id = ?1 AND delivered_at IS NULL AND dead_at IS NULL"
        ),
        params![id, reason],
    )?;
    Ok(())
}

fn reap(conn: &mut Connection, retention_ms: i64) -> rusqlite::Result<usize> {
    let tx = conn.savepoint()?;
    let ids = tx.execute(
        &format!("DELETE FROM processed_events WHERE processed_at <= {NOW} - ?1"),
        params![retention_ms],
    )?;
    tx.execute(
        &format!("DELETE FROM outbox_events WHERE delivered_at <= {NOW} - ?1"),
        params![retention_ms],
    )?;
    tx.commit()?;
    Ok(ids)
}

fn receipts(conn: &Connection, customer: &str) -> rusqlite::Result<ReceiptsView> {
    // One read transaction: both lists from one snapshot, so an event never
    // shows as delivered beside a receipt list read before its delivery.
    let tx = conn.unchecked_transaction()?;
    let view = receipts_in(&tx, customer)?;
    tx.commit()?;
    Ok(view)
}

fn receipts_in(conn: &Connection, customer: &str) -> rusqlite::Result<ReceiptsView> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, event_id, charge_id, amount, currency, created_at FROM receipts
         WHERE customer = ?1 ORDER BY seq",
    )?;
    let receipts = stmt
        .query_map(params![customer], |r| {
            Ok(Receipt {
                id: r.get(0)?,
                object: "receipt",
                event_id: r.get(1)?,
                charge_id: r.get(2)?,
                customer: customer.to_string(),
                amount: r.get::<_, i64>(3)? as u64,
                currency: r.get(4)?,
                created_at: r.get(5)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT e.id, e.charge_id, e.created_at, e.attempts, e.failures, e.delivered_at, e.dead_at,
                COALESCE(p.duplicates, 0)
         FROM outbox_events e LEFT JOIN processed_events p ON p.event_id = e.id
         WHERE e.customer = ?1 ORDER BY e.seq",
    )?;
    let events = stmt
        .query_map(params![customer], |r| {
            let delivered_at: Option<i64> = r.get(5)?;
            let dead_at: Option<i64> = r.get(6)?;
            Ok(EventView {
                id: r.get(0)?,
                kind: CHARGE_SUCCEEDED,
                charge_id: r.get(1)?,
                created_at: r.get(2)?,
                state: EventState::of(delivered_at, dead_at),
                deliveries: r.get(3)?,
                failures: r.get(4)?,
                duplicates_skipped: r.get(7)?,
                delivered_at,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ReceiptsView { receipts, events })
}

#[async_trait]
impl OutboxStorage for SqliteStore {
    async fn claim(
        &self,
        worker: &str,
        limit: usize,
        claim_timeout_ms: i64,
    ) -> StoreResult<Vec<Event>> {
        if !self
            .db
            .read(move |c| any_claimable(c, claim_timeout_ms))
            .await?
        {
            return Ok(Vec::new());
        }
        let worker = worker.to_string();
        self.db
            .write(move |c| claim(c, &worker, limit, claim_timeout_ms))
            .await
    }

    async fn consume(&self, events: &[Event], max_age_ms: i64) -> StoreResult<Vec<Consumed>> {
        let events = events.to_vec();
        self.db
            .write(move |c| consume(c, &events, max_age_ms))
            .await
    }

    async fn ack(&self, event_ids: &[String]) -> StoreResult<()> {
        let ids = event_ids.to_vec();
        self.db.write(move |c| ack(c, &ids)).await
    }

    async fn release(
        &self,
        event_id: &str,
        worker: &str,
        error: &str,
        retry_in_ms: i64,
    ) -> StoreResult<()> {
        let (id, w, e) = (event_id.to_string(), worker.to_string(), error.to_string());
        self.db
            .write(move |c| release(c, &id, &w, &e, retry_in_ms))
            .await
    }

    async fn park(&self, event_id: &str, reason: &str) -> StoreResult<()> {
        let (id, why) = (event_id.to_string(), reason.to_string());
        self.db.write(move |c| park(c, &id, &why)).await
    }

    async fn reap(&self, retention_ms: i64) -> StoreResult<usize> {
        self.db.write(move |c| reap(c, retention_ms)).await
    }

    async fn receipts(&self, customer: &str) -> StoreResult<ReceiptsView> {
        let customer = customer.to_string();
        self.db.read(move |c| receipts(c, &customer)).await
    }
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
