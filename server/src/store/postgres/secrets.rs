//! Server secrets kept in the database (the payload fingerprints' key): the
//! first one any instance stores wins, so every instance on the database and
//! every restart uses the same.

use deadpool_postgres::GenericClient;

use crate::store::StoreResult;

/// The secrets table.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS server_secrets (
    name   TEXT  PRIMARY KEY,
    secret BYTEA NOT NULL
);
";

/// The secret `name`: the stored one, or `candidate`, stored now if none is.
/// `INSERT … ON CONFLICT DO NOTHING` then a read: two instances starting
/// together both read the one that got in.
pub async fn keep_first(
    c: &impl GenericClient,
    name: &str,
    candidate: &[u8],
) -> StoreResult<Vec<u8>> {
    c.execute(
        "INSERT INTO server_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        &[&name, &candidate],
    )
    .await?;
    let row = c
        .query_one(
            "SELECT secret FROM server_secrets WHERE name = $1",
            &[&name],
        )
        .await?;
    Ok(row.try_get(0)?)
}
