//! The charges table on PostgreSQL.

use deadpool_postgres::GenericClient;

use super::outbox;
use crate::outbox::event::NewEvent;
use crate::store::model::Charge;
use crate::store::StoreResult;

/// Inserts a charge with its `charge.succeeded` event for the outbox (in the
/// caller's transaction, so both commit or neither does); `false` when its
/// operation already has one (`UNIQUE(reservation)`), and nothing is written.
pub async fn insert(c: &impl GenericClient, ch: &Charge) -> StoreResult<bool> {
    let stmt = c
        .prepare_cached(
            "INSERT INTO charges (id, customer, idem_key, reservation, amount, currency, status, provider_ref, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (reservation) DO NOTHING",
        )
        .await?;
    let amount = ch.amount as i64;
    let n = c
        .execute(
            &stmt,
            &[
                &ch.id,
                &ch.customer,
                &ch.key,
                &ch.reservation,
                &amount,
                &ch.currency,
                &ch.status,
                &ch.provider_ref,
                &ch.created_at,
            ],
        )
        .await?;
    if n == 1 {
        outbox::insert_event(c, &NewEvent::for_charge(ch)).await?;
    }
    Ok(n == 1)
}

/// A customer's charges, oldest first.
pub async fn list(c: &impl GenericClient, customer: &str) -> StoreResult<Vec<Charge>> {
    let stmt = c
        .prepare_cached(
            "SELECT id, idem_key, amount, currency, provider_ref, created_at FROM charges
             WHERE customer = $1 ORDER BY seq",
        )
        .await?;
    let rows = c.query(&stmt, &[&customer]).await?;
    rows.iter()
        .map(|r| {
            Ok(Charge {
                id: r.try_get(0)?,
                object: "charge",
                key: r.try_get(1)?,
                customer: customer.to_string(),
                amount: r.try_get::<_, i64>(2)? as u64,
                currency: r.try_get(3)?,
                status: "succeeded",
                provider_ref: r.try_get(4)?,
                created_at: r.try_get(5)?,
                reservation: None,
            })
        })
        .collect()
}

/// Deletes a customer's charges, keys, outbox events and receipts; returns
/// how many charges and keys.
pub async fn delete_customer(c: &impl GenericClient, customer: &str) -> StoreResult<(u64, u64)> {
    outbox::delete_customer(c, customer).await?;
    let charges = c
        .execute("DELETE FROM charges WHERE customer = $1", &[&customer])
        .await?;
    let keys = c
        .execute(
            "DELETE FROM idempotency_keys WHERE customer = $1",
            &[&customer],
        )
        .await?;
    Ok((charges, keys))
}
