//! Fuzz target `server_chunked`: the properties in `idemkey_props::server_chunked::check`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| idemkey_props::server_chunked::check(data));
