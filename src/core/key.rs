//! Idempotency keys: the text of a UUID v4 made from 16 random bytes (the browser glue
//! draws them from `crypto.getRandomValues`).

use crate::prelude::*;

/// The lowercase hyphenated UUID v4 of `bytes`: the version and variant bits are set,
/// the other 122 bits are the bytes' own.
pub fn uuid_v4(mut bytes: [u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let mut s = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;
