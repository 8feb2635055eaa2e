//! Fuzz target `server_faults`: the properties in `idemkey_props::server_faults::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::server_faults::check(data));
