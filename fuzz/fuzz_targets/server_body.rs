//! Fuzz target `server_body`: the properties in `idemkey_props::server_body::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::server_body::check(data));
