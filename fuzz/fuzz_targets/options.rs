//! Fuzz target `options`: the properties in `idemkey_props::options::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::options::check(data));
