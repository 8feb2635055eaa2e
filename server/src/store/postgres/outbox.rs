//! The outbox on PostgreSQL: the event insert of phase 3, and the relay's and
//! consumer's statements (the same rules as on SQLite).
//!
//! Every time is the database's clock ([`NOW_MS`]). Claims take rows with
//! `FOR UPDATE SKIP LOCKED`, so concurrent workers on many hosts never claim
//! one event twice and never wait for each other.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;

use super::schema::NOW_MS;
use super::PgStore;
use crate::outbox::event::{
    expired, Consumed, Event, EventState, EventView, NewEvent, Receipt, ReceiptsView,
    CHARGE_SUCCEEDED,
};
use crate::outbox::storage::OutboxStorage;
use crate::store::StoreResult;

/// The outbox, the consumer's processed ids and the mailer stand-in.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS outbox_events (
    seq          BIGSERIAL PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    kind         TEXT    NOT NULL,
    customer     TEXT    NOT NULL,
    charge_id    TEXT    NOT NULL UNIQUE,  -- one event per charge
    amount       BIGINT  NOT NULL,
    currency     TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    available_at BIGINT  NOT NULL,
    claimed_by   TEXT,
    claimed_at   BIGINT,
    attempts     BIGINT  NOT NULL DEFAULT 0,
    failures     BIGINT  NOT NULL DEFAULT 0,
    last_error   TEXT,
    delivered_at BIGINT,
    dead_at      BIGINT
);
CREATE INDEX IF NOT EXISTS outbox_events_open ON outbox_events (seq)
    WHERE delivered_at IS NULL AND dead_at IS NULL;
CREATE INDEX IF NOT EXISTS outbox_events_customer ON outbox_events (customer, seq);
CREATE INDEX IF NOT EXISTS outbox_events_delivered ON outbox_events (delivered_at);

CREATE TABLE IF NOT EXISTS processed_events (
    event_id     TEXT    PRIMARY KEY,
    processed_at BIGINT  NOT NULL,
    duplicates   BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS processed_events_age ON processed_events (processed_at);

-- No UNIQUE on event_id, on purpose: a mailer does not deduplicate,
-- processed_events does.
CREATE TABLE IF NOT EXISTS receipts (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    event_id   TEXT    NOT NULL,
    charge_id  TEXT    NOT NULL,
    customer   TEXT    NOT NULL,
    amount     BIGINT  NOT NULL,
    currency   TEXT    NOT NULL,
    created_at BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS receipts_customer ON receipts (customer, seq);
";

fn claimable(timeout: &str) -> String {
    format!(
        "delivered_at IS NULL AND dead_at IS NULL AND available_at <= {NOW_MS}
         AND (claimed_at IS NULL OR claimed_at <= {NOW_MS} - {timeout})"
    )
}

/// The `charge.succeeded` event of a charge, inside the charge's transaction.
pub async fn insert_event(c: &impl GenericClient, e: &NewEvent) -> StoreResult<()> {
    let stmt = c
        .prepare_cached(&format!(
            "INSERT INTO outbox_events (id, kind, customer, charge_id, amount, currency, created_at, available_at)
             VALUES ($1, $2, $3, $4, $5, $6, {NOW_MS}, {NOW_MS})"
        ))
        .await?;
    let amount = e.amount as i64;
    c.execute(
        &stmt,
        &[
            &e.id,
            &CHARGE_SUCCEEDED,
            &e.customer,
            &e.charge_id,
            &amount,
            &e.currency,
        ],
    )
    .await?;
    Ok(())
}

/// Deletes a customer's events, receipts and the processed ids of its events.
pub async fn delete_customer(c: &impl GenericClient, customer: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM processed_events WHERE event_id IN (SELECT id FROM outbox_events WHERE customer = $1)",
        &[&customer],
    )
    .await?;
    c.execute(
        "DELETE FROM outbox_events WHERE customer = $1",
        &[&customer],
    )
    .await?;
    c.execute("DELETE FROM receipts WHERE customer = $1", &[&customer])
        .await?;
    Ok(())
}

#[async_trait]
impl OutboxStorage for PgStore {
    async fn claim(
        &self,
        worker: &str,
        limit: usize,
        claim_timeout_ms: i64,
    ) -> StoreResult<Vec<Event>> {
        self.bounded(async {
            let c = self.pool.get().await?;
            let stmt = c
                .prepare_cached(&format!(
                    "UPDATE outbox_events SET claimed_by = $1, claimed_at = {NOW_MS}, attempts = attempts + 1
                     WHERE seq IN (SELECT seq FROM outbox_events WHERE {} ORDER BY seq LIMIT $3
                                   FOR UPDATE SKIP LOCKED)
                     RETURNING seq, id, customer, charge_id, amount, currency, created_at, attempts",
                    claimable("$2")
                ))
                .await?;
            let rows = c.query(&stmt, &[&worker, &claim_timeout_ms, &(limit as i64)]).await?;
            let mut out = rows
                .iter()
                .map(|r| {
                    Ok((
                        r.try_get::<_, i64>(0)?,
                        Event {
                            id: r.try_get(1)?,
                            customer: r.try_get(2)?,
                            charge_id: r.try_get(3)?,
                            amount: r.try_get::<_, i64>(4)? as u64,
                            currency: r.try_get(5)?,
                            created_at: r.try_get(6)?,
                            attempts: r.try_get(7)?,
                        },
                    ))
                })
                .collect::<StoreResult<Vec<_>>>()?;
            // RETURNING promises no order.
            out.sort_by_key(|(seq, _)| *seq);
            Ok(out.into_iter().map(|(_, e)| e).collect())
        })
        .await
    }

    async fn consume(&self, events: &[Event], max_age_ms: i64) -> StoreResult<Vec<Consumed>> {
        self.bounded(async {
            let mut c = self.pool.get().await?;
            let tx = c.transaction().await?;
            let now: i64 = tx.query_one(&format!("SELECT {NOW_MS}"), &[]).await?.try_get(0)?;
            let mark = tx
                .prepare_cached(
                    "INSERT INTO processed_events (event_id, processed_at) VALUES ($1, $2)
                     ON CONFLICT (event_id) DO UPDATE SET duplicates = processed_events.duplicates + 1
                     RETURNING duplicates",
                )
                .await?;
            let write = tx
                .prepare_cached(
                    "INSERT INTO receipts (id, event_id, charge_id, customer, amount, currency, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .await?;
            let mut out = Vec::with_capacity(events.len());
            for ev in events {
                if expired(ev, now, max_age_ms) {
                    out.push(Consumed::Expired);
                    continue;
                }
                let duplicates: i64 = tx.query_one(&mark, &[&ev.id, &now]).await?.try_get(0)?;
                let consumed = Consumed::after_mark(ev, now, duplicates);
                if let Consumed::Written(r) = &consumed {
                    let amount = r.amount as i64;
                    tx.execute(
                        &write,
                        &[&r.id, &r.event_id, &r.charge_id, &r.customer, &amount, &r.currency, &r.created_at],
                    )
                    .await?;
                }
                out.push(consumed);
            }
            tx.commit().await?;
            Ok(out)
        })
        .await
    }

    async fn ack(&self, event_ids: &[String]) -> StoreResult<()> {
        self.bounded(async {
            let c = self.pool.get().await?;
            c.execute(
                &format!("UPDATE outbox_events SET delivered_at = {NOW_MS} WHERE id = ANY($1) AND delivered_at IS NULL"),
                &[&event_ids],
            )
            .await?;
            Ok(())
        })
        .await
    }

    async fn release(
        &self,
        event_id: &str,
        worker: &str,
        error: &str,
        retry_in_ms: i64,
    ) -> StoreResult<()> {
        self.bounded(async {
            let c = self.pool.get().await?;
            c.execute(
                &format!(
                    "UPDATE outbox_events SET claimed_by = NULL, claimed_at = NULL, failures = failures + 1,
                         last_error = $3, available_at = {NOW_MS} + $4
                     WHERE id = $1 AND claimed_by = $2 AND delivered_at IS NULL"
                ),
                &[&event_id, &worker, &error, &retry_in_ms],
            )
            .await?;
            Ok(())
        })
        .await
    }

    async fn park(&self, event_id: &str, reason: &str) -> StoreResult<()> {
        self.bounded(async {
            let c = self.pool.get().await?;
            c.execute(
                &format!(
                    "UPDATE outbox_events SET dead_at = {NOW_MS}, last_error = $2
                     WHERE id = $1 AND delivered_at IS NULL AND dead_at IS NULL"
                ),
                &[&event_id, &reason],
            )
            .await?;
            Ok(())
        })
        .await
    }

    async fn reap(&self, retention_ms: i64) -> StoreResult<usize> {
        self.bounded(async {
            let mut c = self.pool.get().await?;
            let tx = c.transaction().await?;
            let ids = tx
                .execute(
                    &format!("DELETE FROM processed_events WHERE processed_at <= {NOW_MS} - $1"),
                    &[&retention_ms],
                )
                .await?;
            tx.execute(
                &format!("DELETE FROM outbox_events WHERE delivered_at <= {NOW_MS} - $1"),
                &[&retention_ms],
            )
            .await?;
            tx.commit().await?;
            Ok(ids as usize)
        })
        .await
    }

    async fn receipts(&self, customer: &str) -> StoreResult<ReceiptsView> {
        self.bounded(async {
            let mut c = self.pool.get().await?;
            // One snapshot for both lists.
            let tx = c
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await?;
            let rows = tx
                .query(
                    "SELECT id, event_id, charge_id, amount, currency, created_at FROM receipts
                     WHERE customer = $1 ORDER BY seq",
                    &[&customer],
                )
                .await?;
            let receipts = rows
                .iter()
                .map(|r| {
                    Ok(Receipt {
                        id: r.try_get(0)?,
                        object: "receipt",
                        event_id: r.try_get(1)?,
                        charge_id: r.try_get(2)?,
                        customer: customer.to_string(),
                        amount: r.try_get::<_, i64>(3)? as u64,
                        currency: r.try_get(4)?,
                        created_at: r.try_get(5)?,
                    })
                })
                .collect::<StoreResult<Vec<_>>>()?;
            let rows = tx
                .query(
                    "SELECT e.id, e.charge_id, e.created_at, e.attempts, e.failures, e.delivered_at, e.dead_at,
                            COALESCE(p.duplicates, 0)
                     FROM outbox_events e LEFT JOIN processed_events p ON p.event_id = e.id
                     WHERE e.customer = $1 ORDER BY e.seq",
                    &[&customer],
                )
                .await?;
            let events = rows
                .iter()
                .map(|r| {
                    let delivered_at: Option<i64> = r.try_get(5)?;
                    let dead_at: Option<i64> = r.try_get(6)?;
                    Ok(EventView {
                        id: r.try_get(0)?,
                        kind: CHARGE_SUCCEEDED,
                        charge_id: r.try_get(1)?,
                        created_at: r.try_get(2)?,
                        state: match (delivered_at, dead_at) {
                            (Some(_), _) => EventState::Delivered,
                            (None, Some(_)) => EventState::Dead,
                            (None, None) => EventState::Pending,
                        },
                        deliveries: r.try_get(3)?,
                        failures: r.try_get(4)?,
                        duplicates_skipped: r.try_get(7)?,
                        delivered_at,
                    })
                })
                .collect::<StoreResult<Vec<_>>>()?;
            tx.commit().await?;
            Ok(ReceiptsView { receipts, events })
        })
        .await
    }
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
