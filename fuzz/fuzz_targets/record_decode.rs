//! Fuzz target `record_decode`: the properties in `idemkey_props::record::check_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::record::check_decode(data));
