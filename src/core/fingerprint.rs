//! The payload fingerprint that binds a key to one payload: only a hash is stored, never the payload.

use crate::core::json::Json;
use crate::error::{Error, Result};
use crate::prelude::*;

/// Prefix naming the fingerprint format, so a later hash can be told apart.
pub const FINGERPRINT_PREFIX: &str = "f1:";

/// Fingerprints a JSON text: canonical form (sorted keys, no whitespace), 64-bit FNV-1a, hex.
///
/// Key order and whitespace never change the result; any other difference does. The
/// simulator and host tests fingerprint payload texts with it; in the browser, the driver
/// writes the payload's canonical JSON itself, with the page's `JSON.parse` and
/// `JSON.stringify` (the same text, for the module's own bytes), and the module hashes it
/// with [`fingerprint_canonical`].
pub fn fingerprint(json_text: &str) -> Result<String> {
    let v = Json::parse(json_text).map_err(Error::InvalidPayload)?;
    let mut canon = String::with_capacity(json_text.len());
    v.write_canonical(&mut canon);
    Ok(fingerprint_canonical(&canon))
}

/// Hashes bytes that are already canonical JSON.
pub fn fingerprint_canonical(canonical: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in canonical.as_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut out = String::with_capacity(FINGERPRINT_PREFIX.len() + 16);
    out.push_str(FINGERPRINT_PREFIX);
    for i in (0..16).rev() {
        out.push(HEX[((h >> (i * 4)) & 15) as usize] as char);
    }
    out
}

#[cfg(test)]
#[path = "fingerprint_tests.rs"]
mod tests;
