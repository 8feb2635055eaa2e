//! Byte-level reading of the ASCII-delimited texts the core parses (storage keys, ended
//! marks, numbers). `str`'s `parse` and `rsplit_once` are generic over every type and pattern,
//! and each costs the wasm hundreds of bytes; the delimiters here are ASCII bytes, which
//! never occur inside a multi-byte character. (Header values are trimmed with `str`'s
//! `trim_ascii`, for the same reason.)

/// The value of `s` when it is one or more ASCII digits and fits a `u64`.
pub fn digits(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u64, |n, b| {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n.checked_mul(10)?.checked_add(d as u64)
    })
}

/// `s` split around the last `sep`, an ASCII byte; `None` when it has none.
pub fn rsplit_byte(s: &str, sep: u8) -> Option<(&str, &str)> {
    let bytes = s.as_bytes();
    let mut i = bytes.len();
    while i > 0 {
        i -= 1;
        if bytes[i] == sep {
            return Some((s.get(..i)?, s.get(i + 1..)?));
        }
    }
    None
}

#[cfg(test)]
#[path = "ascii_tests.rs"]
mod tests;
