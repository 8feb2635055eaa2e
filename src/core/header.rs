//! The idempotency header's value on the way out and the replay header on the way back.

use crate::core::options::HeaderFormat;
use crate::prelude::*;

/// The response header that marks a replayed answer (lowercase, as HTTP/2 sends it).
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// The header value for `key`: bare (Stripe style) or an RFC 8941 sf-string (IETF draft).
pub fn format_key(key: &str, fmt: HeaderFormat) -> String {
    match fmt {
        HeaderFormat::Plain => key.into(),
        HeaderFormat::SfString => {
            let mut out = String::with_capacity(key.len() + 2);
            out.push('"');
            for c in key.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            out
        }
    }
}

/// Parses an RFC 8941 sf-string (`"` chars `"`, with `\"` and `\\` as the only
/// escapes), the inverse of [`format_key`]'s quoted form. Only printable ASCII
/// (0x20-0x7E) may appear inside; nothing may follow the closing quote.
pub fn parse_sf_string(raw: &[u8]) -> Result<Vec<u8>, &'static str> {
    if raw.first() != Some(&b'"') {
        return Err("a quoted string starts with a double quote");
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 1;
    loop {
        match raw.get(i) {
            None => return Err("unterminated quoted string"),
            Some(b'"') => break,
            Some(b'\\') => match raw.get(i + 1) {
                Some(&c @ (b'"' | b'\\')) => {
                    out.push(c);
                    i += 2;
                }
                _ => return Err("invalid escape in quoted string"),
            },
            Some(&c) if (0x20..=0x7e).contains(&c) => {
                out.push(c);
                i += 1;
            }
            Some(_) => return Err("a quoted string holds printable ASCII only (0x20-0x7E)"),
        }
    }
    if i + 1 != raw.len() {
        return Err("unexpected characters after the quoted string");
    }
    Ok(out)
}

/// Whether an `Idempotent-Replayed` header value says the response is a replay.
///
/// Accepts `true` in any case and the sf-boolean `?1`, as servers differ.
pub fn is_replayed(value: Option<&str>) -> bool {
    match value {
        Some(v) => {
            let v = v.trim_ascii();
            v.eq_ignore_ascii_case("true") || v == "?1"
        }
        None => false,
    }
}

#[cfg(test)]
#[path = "header_tests.rs"]
mod tests;
