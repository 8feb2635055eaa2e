//! Fuzz target `record_encode`: the properties in `idemkey_props::record::check_encode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::record::check_encode(data));
