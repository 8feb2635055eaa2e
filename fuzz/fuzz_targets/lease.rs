//! Fuzz target `lease`: the properties in `idemkey_props::lease::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::lease::check(data));
