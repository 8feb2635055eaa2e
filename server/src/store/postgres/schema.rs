//! The PostgreSQL schema of the server's own tables in 0.1.0 (migration 1
//! after the key table, never changed: a change is a new migration), and the
//! database's clock as SQL.

pub use idemkey_axum::postgres::schema::{NOW_MS, SCHEMA_LOCK};

/// The server's tables and indexes; `IF NOT EXISTS` everywhere.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS charges (
    seq          BIGSERIAL PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    customer     TEXT    NOT NULL,
    idem_key     TEXT,            -- NULL for the naive endpoint
    reservation  TEXT    UNIQUE,  -- at most one charge per keyed operation
    amount       BIGINT  NOT NULL,
    currency     TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    provider_ref TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS charges_customer ON charges (customer, seq);
";
