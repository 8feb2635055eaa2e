//! A small strict JSON (RFC 8259) parser and writer, so the crate needs no serde_json: it
//! reads stored records, writes them with [`write_str`] and [`push_u64`], and writes the
//! canonical form of payloads ([`Json::write_canonical`]), in the wasm and on the host.

use crate::core::ascii::digits;
use crate::prelude::*;
use core::cmp::Ordering;

mod parse;

/// Deepest nesting of arrays and objects [`Json::parse`] accepts.
pub const MAX_DEPTH: usize = 64;

/// A parsed JSON value; numbers keep the token as written so nothing is lost.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as its source token (e.g. `-1.5e3`).
    Num(String),
    /// A string, unescaped.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, members in source order (keys are unique).
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// Parses one JSON text; anything but whitespace after the value is an error.
    pub fn parse(text: &str) -> Result<Json, String> {
        Json::parse_why(text).map_err(String::from)
    }

    /// [`Json::parse`] with the reason as a static text, for a caller that words it itself.
    pub(crate) fn parse_why(text: &str) -> Result<Json, &'static str> {
        parse::document(text)
    }

    /// Writes compact JSON (no whitespace), members in stored order.
    pub fn write(&self, out: &mut String) {
        self.write_with(out, false)
    }

    /// Writes compact JSON with object keys sorted by UTF-16 code units at every level (as JCS does).
    /// Keys are unique in parsed values; a hand-built object with duplicate keys writes them
    /// in an unspecified relative order.
    pub fn write_canonical(&self, out: &mut String) {
        self.write_with(out, true)
    }

    fn write_with(&self, out: &mut String, sorted: bool) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(true) => out.push_str("true"),
            Json::Bool(false) => out.push_str("false"),
            Json::Num(n) => out.push_str(n),
            Json::Str(s) => write_str(s, out),
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_with(out, sorted);
                }
                out.push(']');
            }
            Json::Obj(members) => {
                let mut refs: Vec<&(String, Json)> = Vec::with_capacity(members.len());
                for m in members {
                    // Binary insertion sort: payload objects have a handful of keys, and it
                    // is a fraction of the slice sort's wasm. Comparisons stay O(n log n);
                    // the moves are one memmove per key.
                    let at = if sorted {
                        refs.partition_point(|r| utf16_cmp(&r.0, &m.0) == Ordering::Less)
                    } else {
                        refs.len()
                    };
                    refs.insert(at, m);
                }
                out.push('{');
                for (i, (k, v)) in refs.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    v.write_with(out, sorted);
                }
                out.push('}');
            }
        }
    }

    /// The member `key` of an object; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value of a number written as a plain non-negative integer that fits a `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Num(n) => digits(n),
            _ => None,
        }
    }

    /// The value of any number as an `f64`: exact for integers up to 2^53 and for
    /// decimals whose digits and power of ten are exact in an `f64`, close for the rest.
    /// Not `str::parse`, whose correctly rounded reader is 15 KiB of gzipped wasm: the
    /// numbers a record holds are integers, and a payload's are hashed as written.
    pub fn as_f64(&self) -> Option<f64> {
        let Json::Num(n) = self else { return None };
        let (neg, rest) = match n.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, n.as_str()),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, "0"),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut m = 0.0f64;
        for b in int.bytes().chain(frac.bytes()) {
            m = m * 10.0 + (b - b'0') as f64;
        }
        let (exp_neg, exp_digits) = match exp.as_bytes().first() {
            Some(b'-') => (true, &exp[1..]),
            Some(b'+') => (false, &exp[1..]),
            _ => (false, exp),
        };
        // Past 400 powers of ten every f64 is 0 or infinite: the loops stay short.
        let e = crate::core::ascii::digits(exp_digits)
            .unwrap_or(u64::MAX)
            .min(400) as i64;
        let mut e = if exp_neg { -e } else { e } - frac.len() as i64;
        while e > 0 {
            m *= 10.0;
            e -= 1;
        }
        while e < 0 {
            m /= 10.0;
            e += 1;
        }
        Some(if neg { -m } else { m })
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }
}

/// Appends the decimal digits of `n`, without going through `core::fmt`.
pub fn push_u64(out: &mut String, mut n: u64) {
    // 20 digits hold any u64; filled from the end, without an index that could panic.
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    for slot in buf.iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
        i -= 1;
        if n == 0 {
            break;
        }
    }
    for &d in buf.get(i..).unwrap_or_default() {
        out.push(d as char);
    }
}

/// Appends `s` as a JSON string literal, escaping as JCS does (lowercase `\u00xx`).
pub fn write_str(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                out.push_str("\\u00");
                out.push(HEX[(c as usize) >> 4] as char);
                out.push(HEX[(c as usize) & 15] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Orders strings by UTF-16 code units, which differs from byte order above U+FFFF.
///
/// UTF-8 bytes order by code point. The two orders part only where a character above
/// U+FFFF (lead byte 0xF0 to 0xF4; surrogates 0xD800 to 0xDFFF in UTF-16) meets one from
/// U+E000 to U+FFFF (lead byte 0xEE or 0xEF), so the first differing byte is compared with
/// those lead bytes ranked as UTF-16 ranks them. (`encode_utf16` costs the wasm a UTF-8
/// decoder.) The strings agree up to that byte, so it is a lead byte in both or in neither.
fn utf16_cmp(a: &str, b: &str) -> Ordering {
    let rank = |b: u8| match b {
        0xF0..=0xF4 => b - 2,
        0xEE | 0xEF => b + 5,
        _ => b,
    };
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => rank(a[i]).cmp(&rank(b[i])),
        None => a.len().cmp(&b.len()),
    }
}

#[cfg(test)]
mod tests;
