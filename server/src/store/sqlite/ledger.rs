//! The charges table: the business record the demo shows.

use rusqlite::{params, Connection, TransactionBehavior};
use serde::Serialize;

use crate::http::problem::ApiResult;

/// One charge. Its JSON is both the `201` body and a ledger entry.
#[derive(Debug, Clone, Serialize)]
pub struct Charge {
    /// `ch_…`
    pub id: String,
    /// Always `"charge"`, so a body is recognisable on its own.
    pub object: &'static str,
    /// The idempotency key that created it (`null` for the naive endpoint).
    pub key: Option<String>,
    /// Customer scope.
    pub customer: String,
    /// Minor units (cents), a positive integer.
    pub amount: u64,
    /// Lowercase ISO 4217 code.
    pub currency: String,
    /// Always `"succeeded"`: declines are not charges.
    pub status: &'static str,
    /// The provider's payment reference.
    pub provider_ref: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Operation id; internal.
    #[serde(skip)]
    pub reservation: Option<String>,
}

/// Inserts a charge inside the caller's transaction.
pub fn insert(conn: &Connection, c: &Charge) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO charges (id, customer, idem_key, reservation, amount, currency, status, provider_ref, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![c.id, c.customer, c.key, c.reservation, c.amount as i64, c.currency, c.status, c.provider_ref, c.created_at],
    )?;
    Ok(())
}

/// Inserts a charge in its own transaction (the naive endpoint).
pub fn insert_alone(conn: &mut Connection, c: &Charge) -> ApiResult<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    insert(&tx, c)?;
    tx.commit()?;
    Ok(())
}

/// A customer's charges, oldest first.
pub fn list(conn: &Connection, customer: &str) -> ApiResult<Vec<Charge>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, idem_key, amount, currency, provider_ref, created_at FROM charges
         WHERE customer = ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![customer], |r| {
        Ok(Charge {
            id: r.get(0)?,
            object: "charge",
            key: r.get(1)?,
            customer: customer.to_string(),
            amount: r.get::<_, i64>(2)? as u64,
            currency: r.get(3)?,
            status: "succeeded",
            provider_ref: r.get(4)?,
            created_at: r.get(5)?,
            reservation: None,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// Empties a customer's ledger, keys and provider records. Returns the
/// number of charges and keys deleted.
pub fn delete_customer(conn: &mut Connection, customer: &str) -> ApiResult<(usize, usize)> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let charges = tx.execute("DELETE FROM charges WHERE customer = ?1", params![customer])?;
    let keys = tx.execute(
        "DELETE FROM idempotency_keys WHERE customer = ?1",
        params![customer],
    )?;
    tx.execute(
        "DELETE FROM provider_payments WHERE customer = ?1",
        params![customer],
    )?;
    tx.commit()?;
    Ok((charges, keys))
}
