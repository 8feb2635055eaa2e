//! Fuzz target `ended`: the properties in `idemkey_props::ended::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::ended::check(data));
