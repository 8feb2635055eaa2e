//! For code that implements a key store of its own ([`KeyStore`](crate::KeyStore)),
//! or reaches the key table beside the crate (a server sharing its SQL, its
//! ids and its clock): the terms a store answers in, and the rules both
//! stores here judge keys by. An application that uses [`Idempotency`](crate::Idempotency)
//! with the crate's stores needs none of it.

pub use crate::fingerprint::canonical;
pub use crate::hold::{HeldKey, Hold};
pub use crate::ids::{key_number, new_id, now_ms, operation_id};
pub use crate::key::{parse_key, trim_ows, visible};
pub use crate::migrations::{pending, VERSIONS_TABLE};
pub use crate::model::{
    completion, decide, held, lookup, reapable, reapable_sql, stale_sql, Completed, CompletionRow,
    Decision, KeyRequest, KeyRow, Lock, Lookup, Reserved,
};
pub use crate::store::Cause;
