//! Idempotency keys: the text of a UUID v4 made from 16 random bytes (the browser glue
//! draws them from `crypto.getRandomValues`).

use crate::prelude::*;

/// The lowercase hyphenated UUID v4 of `bytes` (RFC 9562): the version and variant bits
/// are set, the other 122 bits are the bytes' own.
pub fn uuid_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = bytes[6] & 0x0f | 0x40;
    bytes[8] = bytes[8] & 0x3f | 0x80;
    let mut s = String::with_capacity(36);
    for (i, b) in bytes.into_iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        for n in [b >> 4, b & 15] {
            s.push(char::from(b"0123456789abcdef"[usize::from(n)]));
        }
    }
    s
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;
