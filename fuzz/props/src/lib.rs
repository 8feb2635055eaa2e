//! The properties idemkey's parsers and decoders must keep on any input, one module per
//! parser. Each `check(data)` panics when a property breaks: the cargo-fuzz targets in
//! `fuzz/fuzz_targets/` call them with libFuzzer's inputs, and `tests/replay.rs` calls
//! them with every committed corpus and crash input, so a crash once found stays a test.
#![deny(missing_docs)]

pub mod json;
pub mod lease;
pub mod options;
pub mod record;
pub mod retry_after;
pub mod server_body;
pub mod server_chunked;
pub mod server_faults;
pub mod server_head;
pub mod server_headers;
pub mod server_json;
pub mod server_provider;

/// A target's check: panics when `data` breaks a property.
pub type Check = fn(&[u8]);

/// Every target: its name (the fuzz target's and the corpus directory's) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("json", json::check),
    ("record_decode", record::check_decode),
    ("record_encode", record::check_encode),
    ("retry_after", retry_after::check),
    ("options", options::check),
    ("lease", lease::check),
    ("server_headers", server_headers::check),
    ("server_body", server_body::check),
    ("server_faults", server_faults::check),
    ("server_json", server_json::check),
    ("server_head", server_head::check),
    ("server_chunked", server_chunked::check),
    ("server_provider", server_provider::check),
];
