//! The charges table on SQLite: the business record the demo shows.

use rusqlite::{params, Connection};

use crate::outbox::event::NewEvent;
use crate::store::model::Charge;
use crate::store::sqlite::outbox;

/// Inserts a charge inside the caller's transaction, with its
/// `charge.succeeded` event for the outbox, so both commit or neither does;
/// `false` when its operation already has one (`UNIQUE(reservation)`), and
/// nothing is written.
pub fn insert(conn: &Connection, c: &Charge) -> rusqlite::Result<bool> {
    let n = conn.prepare_cached(
        "INSERT INTO charges (id, customer, idem_key, reservation, amount, currency, status, provider_ref, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (reservation) DO NOTHING",
    )?
    .execute(params![c.id, c.customer, c.key, c.reservation, c.amount as i64, c.currency, c.status, c.provider_ref, c.created_at])?;
    if n == 1 {
        outbox::insert_event(conn, &NewEvent::for_charge(c))?;
    }
    Ok(n == 1)
}

/// Inserts a charge in its own transaction (the naive endpoint).
pub fn insert_alone(conn: &mut Connection, c: &Charge) -> rusqlite::Result<()> {
    let tx = conn.savepoint()?;
    insert(&tx, c)?;
    tx.commit()
}

/// A customer's charges, oldest first.
pub fn list(conn: &Connection, customer: &str) -> rusqlite::Result<Vec<Charge>> {
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
    rows.collect()
}

/// Empties a customer's ledger, keys, outbox events and receipts; returns
/// how many charges and keys.
pub fn delete_customer(conn: &mut Connection, customer: &str) -> rusqlite::Result<(u64, u64)> {
    let tx = conn.savepoint()?;
    let charges = tx.execute("DELETE FROM charges WHERE customer = ?1", params![customer])?;
    let keys = tx.execute(
        "DELETE FROM idempotency_keys WHERE customer = ?1",
        params![customer],
    )?;
    outbox::delete_customer(&tx, customer)?;
    tx.commit()?;
    Ok((charges as u64, keys as u64))
}
