//! The payment provider stand-in's own table, in its own SQLite file (or the
//! server's, for convenience): one payment per idempotency key and operation.
//! It never joins the server's transactions.

use std::path::Path;

use rusqlite::{params, OptionalExtension};

use super::connection::Sqlite;
use crate::ids::{new_id, now_ms};
use crate::store::migrations::Migration;
use crate::store::StoreResult;

/// The provider's table.
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

/// One payment request as the provider's ledger records it.
#[derive(Debug, Clone)]
pub struct PaymentRow {
    /// Customer scope.
    pub customer: String,
    /// The idempotency key it was sent with.
    pub key: String,
    /// The operation id.
    pub reservation: String,
    /// Minor units.
    pub amount: u64,
    /// Currency code.
    pub currency: String,
    /// Approved (true) or declined.
    pub approved: bool,
}

/// A recorded payment: approved?, reference, amount, currency.
pub type Found = (bool, String, u64, String);

/// The provider stand-in's schema, version by version.
pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "0.1.0: provider payments",
    sql: &[SCHEMA],
}];

/// The provider's payments; cheap to clone.
#[derive(Clone)]
pub struct ProviderPayments {
    db: Sqlite,
}

impl ProviderPayments {
    /// Opens (creating if needed) the provider's SQLite file.
    pub fn open(path: &Path) -> Result<ProviderPayments, String> {
        Ok(ProviderPayments {
            db: Sqlite::open(path, "provider", MIGRATIONS).map_err(|e| e.to_string())?,
        })
    }

    /// Records the payment once per (customer, key, reservation) and counts
    /// the call; returns (approved, reference) of the first call.
    pub async fn pay_once(&self, p: PaymentRow) -> StoreResult<(bool, String)> {
        self.db
            .write(move |conn| {
                let tx = conn.savepoint()?;
                let found = tx
                    .prepare_cached(
                        "UPDATE provider_payments SET calls = calls + 1
                         WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3
                         RETURNING outcome, ref",
                    )?
                    .query_row(params![p.customer, p.key, p.reservation], |r| {
                        Ok((r.get::<_, String>(0)? == "approved", r.get::<_, String>(1)?))
                    })
                    .optional()?;
                let answer = match found {
                    Some(first) => first,
                    None => {
                        let reference = new_id("pay");
                        tx.prepare_cached(
                            "INSERT INTO provider_payments
                                 (customer, idem_key, reservation, amount, currency, outcome, ref, calls, created_at)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8)",
                        )?
                        .execute(params![
                                p.customer,
                                p.key,
                                p.reservation,
                                p.amount as i64,
                                p.currency,
                                if p.approved { "approved" } else { "declined" },
                                reference,
                                now_ms()
                            ])?;
                        (p.approved, reference)
                    }
                };
                tx.commit()?;
                Ok(answer)
            })
            .await
    }

    /// What was recorded under (customer, key, reservation), if anything.
    pub async fn find(
        &self,
        customer: String,
        key: String,
        reservation: String,
    ) -> StoreResult<Option<Found>> {
        self.db
            .read(move |conn| {
                conn.query_row(
                    "SELECT outcome, ref, amount, currency FROM provider_payments
                     WHERE customer = ?1 AND idem_key = ?2 AND reservation = ?3",
                    params![customer, key, reservation],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)? == "approved",
                            r.get(1)?,
                            r.get::<_, i64>(2)? as u64,
                            r.get(3)?,
                        ))
                    },
                )
                .optional()
            })
            .await
    }

    /// (calls, payments) of one customer.
    pub async fn stats(&self, customer: String) -> StoreResult<(i64, i64)> {
        self.db
            .read(move |conn| {
                conn.query_row(
                    "SELECT COALESCE(SUM(calls), 0), COUNT(*) FROM provider_payments WHERE customer = ?1",
                    params![customer],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
            })
            .await
    }

    /// Deletes a customer's payments.
    pub async fn delete_customer(&self, customer: String) -> StoreResult<u64> {
        self.db
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM provider_payments WHERE customer = ?1",
                    params![customer],
                )
                .map(|n| n as u64)
            })
            .await
    }
}
