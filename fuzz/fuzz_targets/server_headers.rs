//! Fuzz target `server_headers`: the properties in `idemkey_props::server_headers::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::server_headers::check(data));
