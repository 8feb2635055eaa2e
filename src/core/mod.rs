//! The pure core: record format, payload fingerprint, retry policy, state machine,
//! option validation. No web-sys here, so all of it is tested on the host with `cargo test`.

pub mod ascii;
pub mod ended;
pub mod fingerprint;
pub mod header;
pub mod json;
pub mod key;
pub mod machine;
pub mod options;
pub mod plan;
pub mod record;
pub mod record_read;
pub mod retry;
pub mod retry_after;
pub mod state;
pub mod sweep;
pub mod sync;
