//! Fuzz target `server_head`: the properties in `idemkey_props::server_head::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::server_head::check(data));
