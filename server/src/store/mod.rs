//! Storage of keys, charges and stored responses.

pub mod sqlite;
