//! The idempotency header's value on the way out and the replay header on the way back.

use crate::core::options::HeaderFormat;
use crate::prelude::*;

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

/// Whether an `Idempotent-Replayed` header value says the response is a replay.
///
/// Accepts `true` in any case and the sf-boolean `?1`, as servers differ.
pub fn is_replayed(value: Option<&str>) -> bool {
    match value {
        Some(v) => {
            let v = v.trim_matches(|c| c == ' ' || c == '\t');
            v.eq_ignore_ascii_case("true") || v == "?1"
        }
        None => false,
    }
}

#[cfg(test)]
#[path = "header_tests.rs"]
mod tests;
