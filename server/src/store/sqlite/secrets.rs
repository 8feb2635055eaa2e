//! Server secrets kept in the SQLite file (the payload fingerprints' key):
//! the first one stored wins, so every process on the file and every restart
//! uses the same.

use rusqlite::{params, Connection};

/// The secrets table.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS server_secrets (
    name   TEXT PRIMARY KEY,
    secret BLOB NOT NULL
) WITHOUT ROWID;
";

/// The secret `name`: the stored one, or `candidate`, stored now if none is.
pub fn keep_first(conn: &Connection, name: &str, candidate: &[u8]) -> rusqlite::Result<Vec<u8>> {
    conn.execute(
        "INSERT INTO server_secrets (name, secret) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
        params![name, candidate],
    )?;
    conn.query_row(
        "SELECT secret FROM server_secrets WHERE name = ?1",
        params![name],
        |r| r.get(0),
    )
}
