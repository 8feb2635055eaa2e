//! Running a store's migrations on PostgreSQL: in one transaction under an
//! advisory lock, so instances starting together take turns and all but
//! the first find nothing to do. No DDL runs when nothing is pending: even
//! `CREATE … IF NOT EXISTS` locks, and an instance starting beside running
//! ones would then wait on (and deadlock with) their transactions.

use tokio_postgres::Client;

use crate::migrations::{pending, Migration, VERSIONS_TABLE};
use crate::postgres::schema::{NOW_MS, SCHEMA_LOCK};
use crate::store::{StoreError, StoreResult};

/// Applies the migrations of `all` (in `scope`) the database has not had yet.
pub async fn migrate(c: &mut Client, scope: &str, all: &[Migration]) -> StoreResult<()> {
    let tx = c.transaction().await?;
    // A migration may wait for another instance's and build indexes on a
    // large table: the pool's statement timeout is not for it.
    tx.batch_execute("SET LOCAL statement_timeout = 0").await?;
    tx.batch_execute(SCHEMA_LOCK).await?;
    let versioned: bool = tx
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .await?
        .try_get(0)?;
    if !versioned {
        tx.batch_execute(VERSIONS_TABLE).await?;
    }
    let applied: Vec<i64> = tx
        .query(
            "SELECT version FROM schema_migrations WHERE scope = $1",
            &[&scope],
        )
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    for m in pending(all, &applied).map_err(StoreError::failed)? {
        for sql in m.sql {
            tx.batch_execute(sql).await?;
        }
        tx.execute(
            &format!(
                "INSERT INTO schema_migrations (scope, version, name, applied_at) VALUES ($1, $2, $3, {NOW_MS})"
            ),
            &[&scope, &m.version, &m.name],
        )
        .await?;
        tracing::info!(scope, version = m.version, name = m.name, "schema migrated");
    }
    tx.commit().await?;
    Ok(())
}
