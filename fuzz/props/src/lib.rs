//! The properties idemkey's parsers and decoders must keep on any input, one module per
//! parser. Each `check(data)` panics when a property breaks: the cargo-fuzz targets in
//! `fuzz/fuzz_targets/` call them with libFuzzer's inputs, and `tests/replay.rs` calls
//! them with every committed corpus and crash input, so a crash once found stays a test.
#![deny(missing_docs)]

pub mod ended;
pub mod json;
pub mod options;
pub mod record;
pub mod retry_after;
pub mod server_body;
pub mod server_faults;
pub mod server_headers;
pub mod server_json;
pub mod server_provider;

/// Splits `data` into a clock in ms, read from its first 8 bytes, and the rest; `default`
/// and all of `data` when it is shorter. The clock reaches about year 2527: far beyond any
/// real clock, well inside f64's whole numbers.
pub fn clock_and_rest(data: &[u8], default: f64) -> (f64, &[u8]) {
    match data.split_first_chunk::<8>() {
        Some((n, rest)) => ((u64::from_le_bytes(*n) >> 20) as f64, rest),
        None => (default, data),
    }
}

/// A target's check: panics when `data` breaks a property.
pub type Check = fn(&[u8]);

/// Every target: its name (the fuzz target's and the corpus directory's) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("json", json::check),
    ("record_decode", record::check_decode),
    ("record_encode", record::check_encode),
    ("retry_after", retry_after::check),
    ("options", options::check),
    ("ended", ended::check),
    ("server_headers", server_headers::check),
    ("server_body", server_body::check),
    ("server_faults", server_faults::check),
    ("server_json", server_json::check),
    ("server_provider", server_provider::check),
];
