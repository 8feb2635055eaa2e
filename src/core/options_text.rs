//! What the text options may hold: HTTP tokens (header names), lengths counted as JS counts
//! them, Unicode white space, CR, LF and NUL. Part of `core::options`, in a file of its own.

/// RFC 9110 `token`: what a header name may be made of.
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        ..=b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
                )
        })
}

/// The length of `s` in UTF-16 code units (JS `length`): one per UTF-8 sequence, two for a
/// four-byte one. (`encode_utf16().count()` links a vectorised char counter many times
/// this size.)
pub(super) fn utf16_len(s: &str) -> usize {
    s.bytes()
        .map(|b| (b & 0xc0 != 0x80) as usize + (b >= 0xf0) as usize)
        .sum()
}

/// Unicode `White_Space`, what `char::is_whitespace` answers (the test below compares
/// them on every `char`): its lookup table and code weigh about 0.1 KiB of gzipped wasm
/// more than these ranges.
pub(super) fn is_white_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Whether `s` holds a CR, LF or NUL (refused in the endpoint and in header values).
pub(super) fn has_crlf(s: &str) -> bool {
    s.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0))
}

/// [`is_white_space`] against the standard library's definition.
#[cfg(test)]
mod tests {
    #[test]
    fn is_white_space_is_char_is_whitespace() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            assert_eq!(super::is_white_space(c), c.is_whitespace(), "{c:?}");
        }
    }
}
