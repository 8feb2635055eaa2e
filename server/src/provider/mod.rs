//! Stand-in for the downstream payment provider.
//!
//! It behaves like an external API that accepts an idempotency key (Stripe's
//! does): it takes `--provider-latency-ms` to answer, records each payment in
//! its own table, and a second call with the same key gets the first answer
//! instead of a second payment. The server calls it outside its own
//! transaction, with the client's key qualified by customer and operation
//! (`reservation`): retries of one operation share it, while a key reused
//! after its TTL is a new operation and a new payment, as the TTL contract says.
//! It shares the SQLite file only for convenience; it never joins the server's
//! transactions.

use std::time::Duration;

use rusqlite::{params, OptionalExtension, TransactionBehavior};
use serde::Serialize;

use crate::http::problem::ApiResult;
use crate::ids::{new_id, now_ms};
use crate::store::sqlite::connection::Store;

/// The test card the provider always declines (Stripe's "generic decline").
pub const DECLINED_CARD: &str = "4000000000000002";

/// The provider's own table.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS provider_payments (
    customer    TEXT    NOT NULL,
    idem_key    TEXT    NOT NULL,
    reservation TEXT    NOT NULL,
    amount      INTEGER NOT NULL,
    currency    TEXT    NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('approved', 'declined')),
    ref         TEXT    NOT NULL,
    calls       INTEGER NOT NULL,  -- requests received, deduplicated ones included
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (customer, idem_key, reservation)
) WITHOUT ROWID;
";

/// A payment request.
#[derive(Debug, Clone)]
pub struct PaymentRequest {
    /// Customer scope.
    pub customer: String,
    /// The client's idempotency key (random for the naive endpoint).
    pub key: String,
    /// The operation id.
    pub reservation: String,
    /// Minor units.
    pub amount: u64,
    /// Currency code.
    pub currency: String,
    /// Card number, digits only.
    pub card: Option<String>,
}

/// The provider's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    /// True if the card was charged.
    pub approved: bool,
    /// `pay_…`, the same on every deduplicated call.
    pub reference: String,
}

/// A payment as the provider recorded it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Its answer.
    pub payment: Payment,
    /// Minor units it was asked for.
    pub amount: u64,
    /// Currency it was asked for.
    pub currency: String,
}

/// Per-customer counters, for tests and the demo.
#[derive(Debug, Serialize)]
pub struct Stats {
    /// Calls received (deduplicated ones included).
    pub calls: i64,
    /// Distinct payments recorded.
    pub payments: i64,
}

/// The provider client; cheap to clone.
#[derive(Clone)]
pub struct Provider {
    store: Store,
    latency: Duration,
}

impl Provider {
    /// A provider that answers after `latency`.
    pub fn new(store: Store, latency: Duration) -> Provider {
        Provider { store, latency }
    }

    /// Charges (or declines) once per (customer, key, reservation).
    pub async fn pay(&self, req: PaymentRequest) -> ApiResult<Payment> {
        tokio::time::sleep(self.latency).await;
        self.store
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let found = tx
                    .query_row(
                        "SELECT outcome, ref FROM provider_payments
                         WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3",
                        params![req.customer, req.key, req.reservation],
                        |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
                    )
                    .optional()?;
                let payment = match found {
                    Some((outcome, reference)) => {
                        tx.execute(
                            "UPDATE provider_payments SET calls = calls + 1
                             WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3",
                            params![req.customer, req.key, req.reservation],
                        )?;
                        Payment { approved: outcome == "approved", reference }
                    }
                    None => {
                        let approved = req.card.as_deref() != Some(DECLINED_CARD);
                        let reference = new_id("pay");
                        tx.execute(
                            "INSERT INTO provider_payments
                                 (customer, idem_key, reservation, amount, currency, outcome, ref, calls, created_at)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8)",
                            params![
                                req.customer,
                                req.key,
                                req.reservation,
                                req.amount as i64,
                                req.currency,
                                if approved { "approved" } else { "declined" },
                                reference,
                                now_ms()
                            ],
                        )?;
                        Payment { approved, reference }
                    }
                };
                tx.commit()?;
                Ok(payment)
            })
            .await
    }

    /// What the provider did under (customer, key, reservation), if anything,
    /// with the amount and currency it was asked for. A lookup (as a real
    /// provider's "retrieve by idempotency key"), never a new payment, and not
    /// counted in `calls`.
    pub async fn find(
        &self,
        customer: String,
        key: String,
        reservation: String,
    ) -> ApiResult<Option<Recorded>> {
        self.store
            .read(move |conn| {
                Ok(conn
                    .query_row(
                        "SELECT outcome, ref, amount, currency FROM provider_payments
                         WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3",
                        params![customer, key, reservation],
                        |r| {
                            Ok(Recorded {
                                payment: Payment {
                                    approved: r.get::<_, String>(0)? == "approved",
                                    reference: r.get(1)?,
                                },
                                amount: r.get::<_, i64>(2)? as u64,
                                currency: r.get(3)?,
                            })
                        },
                    )
                    .optional()?)
            })
            .await
    }

    /// Counters for one customer.
    pub async fn stats(&self, customer: String) -> ApiResult<Stats> {
        self.store
            .read(move |conn| {
                Ok(conn.query_row(
                    "SELECT COALESCE(SUM(calls), 0), COUNT(*) FROM provider_payments WHERE customer = ?1",
                    params![customer],
                    |r| Ok(Stats { calls: r.get(0)?, payments: r.get(1)? }),
                )?)
            })
            .await
    }
}
