//! The embedded SQLite store (one file, WAL, `synchronous=FULL`).

pub mod connection;
pub mod idempotency_keys;
pub mod ledger;
