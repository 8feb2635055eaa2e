//! The `Idempotency-Key` request header: parsing, and an axum extractor.
//!
//! The key may be sent bare (`Idempotency-Key: 8e03…`, Stripe style) or as an
//! RFC 8941 sf-string (`Idempotency-Key: "8e03…"`, the IETF draft's form, the
//! one the idemkey browser module sends). Both spellings of one key are the
//! same key. Either way
//! the key itself must be 1–255 visible ASCII characters (0x21–0x7E):
//! anything else is ambiguous to log, to store and to compare, so it is
//! refused with a 400.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::HeaderMap;

use crate::error::Error;

/// Longest accepted key, in characters.
pub const MAX_KEY_LEN: usize = 255;

/// Header carrying the key.
pub const KEY_HEADER: &str = "idempotency-key";

/// Parses an RFC 8941 sf-string (`"` chars `"`, with `\"` and `\\` as the
/// only escapes): only printable ASCII (0x20–0x7E) inside, nothing after the
/// closing quote. The browser module's quoted form is its inverse.
fn parse_sf_string(raw: &[u8]) -> Result<Vec<u8>, &'static str> {
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

/// True for visible ASCII (0x21–0x7E).
pub fn visible(b: u8) -> bool {
    (0x21..=0x7e).contains(&b)
}

/// Parses one key header value (raw bytes, as they came off the wire).
pub fn parse_key(raw: &[u8]) -> Result<String, &'static str> {
    let raw = trim_ows(raw);
    let key: Vec<u8> = if raw.first() == Some(&b'"') {
        parse_sf_string(raw)?
    } else {
        raw.to_vec()
    };
    if key.is_empty() {
        return Err("the key is empty");
    }
    // Sent bare, such a key would read as a quoted string: it has one spelling only.
    if key.first() == Some(&b'"') {
        return Err("the key must not begin with a double quote");
    }
    if key.len() > MAX_KEY_LEN {
        return Err("the key is longer than 255 characters");
    }
    if !key.iter().all(|&b| visible(b)) {
        return Err("the key must be visible ASCII characters only (0x21-0x7E)");
    }
    // All bytes are ASCII, so this cannot fail.
    String::from_utf8(key).map_err(|_| "the key is not ASCII")
}

/// `s` without leading and trailing spaces and tabs (HTTP's optional whitespace).
pub fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// A request's validated idempotency key; as an axum extractor it refuses a
/// request without one, with it twice, or with a malformed one, with a `400`
/// problem document ([`Error::MissingKey`], [`Error::InvalidKey`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(pub String);

impl IdempotencyKey {
    /// The request's key: an error when missing, repeated or malformed.
    pub fn from_headers(headers: &HeaderMap) -> Result<IdempotencyKey, Error> {
        let mut values = headers.get_all(KEY_HEADER).iter();
        let first = values.next().ok_or(Error::MissingKey)?;
        if values.next().is_some() {
            return Err(Error::InvalidKey("the header was sent more than once"));
        }
        parse_key(first.as_bytes())
            .map(IdempotencyKey)
            .map_err(Error::InvalidKey)
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Error> {
        IdempotencyKey::from_headers(&parts.headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_and_quoted_spellings_are_one_key() {
        let uuid = "8e03978e-40d5-43e8-bc93-6894a57f9324";
        assert_eq!(parse_key(uuid.as_bytes()).unwrap(), uuid);
        assert_eq!(parse_key(format!("\"{uuid}\"").as_bytes()).unwrap(), uuid);
        assert_eq!(parse_key(format!("  {uuid}\t").as_bytes()).unwrap(), uuid);
    }

    #[test]
    fn sf_string_escapes() {
        assert_eq!(parse_key(br#""a\"b\\c""#).unwrap(), r#"a"b\c"#);
        assert!(parse_key(br#""a\nb""#).is_err());
        assert!(parse_key(br#""abc"#).is_err());
        assert!(parse_key(br#""abc"x"#).is_err());
        assert!(parse_key(br#""""#).is_err(), "empty quoted key");
        assert!(
            parse_key(br#""a b""#).is_err(),
            "space is not visible ASCII"
        );
    }

    #[test]
    fn sf_strings_as_rfc_8941_has_them() {
        assert_eq!(parse_sf_string(br#""""#).unwrap(), b"");
        assert_eq!(parse_sf_string(br#""a b""#).unwrap(), b"a b");
        assert_eq!(parse_sf_string(br#""\"\\""#).unwrap(), br#""\"#);
        for bad in [
            &b"abc"[..],
            b"\"abc",
            b"\"a\\x\"",
            b"\"a\\\"",
            b"\"a\tb\"",
            b"\"caf\xc3\xa9\"",
            b"\"a\" ",
            b"\"a\"\"b\"",
        ] {
            assert!(
                parse_sf_string(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn length_bounds() {
        assert!(parse_key(b"").is_err());
        assert!(parse_key(b"   ").is_err());
        assert_eq!(parse_key(b"x").unwrap(), "x");
        let max = "k".repeat(MAX_KEY_LEN);
        assert_eq!(parse_key(max.as_bytes()).unwrap(), max);
        assert!(parse_key("k".repeat(MAX_KEY_LEN + 1).as_bytes()).is_err());
        let quoted = format!("\"{}\"", "k".repeat(MAX_KEY_LEN + 1));
        assert!(parse_key(quoted.as_bytes()).is_err());
    }

    #[test]
    fn only_visible_ascii() {
        assert!(parse_key(b"a b").is_err());
        assert!(parse_key("caf\u{e9}".as_bytes()).is_err());
        assert!(parse_key(b"a\xffb").is_err());
        assert!(parse_key(b"a\x01b").is_err());
        assert!(parse_key(b"!~").is_ok());
    }

    #[test]
    fn missing_repeated_and_malformed_headers() {
        let mut h = HeaderMap::new();
        assert!(matches!(
            IdempotencyKey::from_headers(&h),
            Err(Error::MissingKey)
        ));
        h.insert(KEY_HEADER, "\"k1\"".parse().unwrap());
        assert_eq!(IdempotencyKey::from_headers(&h).unwrap().as_str(), "k1");
        h.append(KEY_HEADER, "k2".parse().unwrap());
        assert!(matches!(
            IdempotencyKey::from_headers(&h),
            Err(Error::InvalidKey(_))
        ));
        h.insert(KEY_HEADER, "a b".parse().unwrap());
        assert!(matches!(
            IdempotencyKey::from_headers(&h),
            Err(Error::InvalidKey(_))
        ));
    }
}
