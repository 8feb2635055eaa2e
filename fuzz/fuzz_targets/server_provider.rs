//! Fuzz target `server_provider`: the properties in `idemkey_props::server_provider::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::server_provider::check(data));
