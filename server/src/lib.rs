//! The reference server's modules as a library: the `idemkey-server` binary is built on
//! it, and the fuzz targets reach its parsers (headers, bodies, fault requests) through it.
#![deny(missing_docs)]

pub mod cli;
pub mod faults;
pub mod http;
pub mod idem;
/// Random ids and the wall clock, idemkey-axum's.
pub mod ids {
    pub use idemkey_axum::implementers::{new_id, now_ms};
}
pub mod outbox;
pub use idemkey_axum::problem as problem_doc;
pub mod provider;
pub mod shutdown;
pub mod store;
pub mod worker;
