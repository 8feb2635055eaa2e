//! The SQLite file of the server: the crate's [`Database`] (one writer
//! thread with group commit, readers beside it) and the server's own tables.

pub use idemkey_axum::sqlite::Database as Sqlite;

/// Schema of the server's own tables as 0.1.0 made them: part of migration
/// 1 after the key table (`idemkey_axum::sqlite::KEYS_SCHEMA`), never
/// changed (a change is a new migration). The provider stand-in keeps its
/// own (see `provider_payments::SCHEMA`).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS charges (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT    NOT NULL UNIQUE,
    customer     TEXT    NOT NULL,
    idem_key     TEXT,            -- NULL for the naive endpoint
    reservation  TEXT    UNIQUE,  -- at most one charge per keyed operation
    amount       INTEGER NOT NULL,
    currency     TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    provider_ref TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS charges_customer ON charges (customer, seq);
";
