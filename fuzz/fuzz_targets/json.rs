//! Fuzz target `json`: the properties in `idemkey_props::json::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::json::check(data));
