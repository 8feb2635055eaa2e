//! Fuzz target `retry_after`: the properties in `idemkey_props::retry_after::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::retry_after::check(data));
