//! Fuzz target `server_json`: the properties in `idemkey_props::server_json::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::server_json::check(data));
