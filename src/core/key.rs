//! Idempotency keys: the text of a UUID v4 made from 16 random bytes (the browser glue
//! draws them from `crypto.getRandomValues`).

use crate::prelude::*;

/// The lowercase hyphenated UUID v4 of `bytes` (the `uuid` crate's): the version and
/// variant bits are set, the other 122 bits are the bytes' own.
pub fn uuid_v4(bytes: [u8; 16]) -> String {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    let text = uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .encode_lower(&mut buf);
    String::from(&*text)
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;
