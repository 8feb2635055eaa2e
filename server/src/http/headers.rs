//! Parsing of the `Idempotency-Key` and `X-Customer-Id` request headers.
//!
//! The key may be sent bare (`Idempotency-Key: 8e03…`, Stripe style) or as an
//! RFC 8941 sf-string (`Idempotency-Key: "8e03…"`, the IETF draft's form),
//! parsed by the client crate's own `parse_sf_string`. Both
//! spellings of one key are the same key. Either way the key itself must be
//! 1–255 visible ASCII characters (0x21–0x7E): anything else is ambiguous to
//! log, to store and to compare, so it is refused with a 400.

use axum::http::HeaderMap;
use idemkey::core::header::parse_sf_string;

use crate::http::problem::ApiError;

/// Longest accepted key, in characters.
pub const MAX_KEY_LEN: usize = 255;
/// Longest accepted customer id, in characters.
pub const MAX_CUSTOMER_LEN: usize = 128;
/// Customer used when `X-Customer-Id` is absent.
pub const ANONYMOUS: &str = "anonymous";

/// Header carrying the key.
pub const KEY_HEADER: &str = "idempotency-key";
/// Header scoping keys and ledgers to one customer.
pub const CUSTOMER_HEADER: &str = "x-customer-id";

fn visible(b: u8) -> bool {
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

fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// The request's idempotency key: 400 when missing, repeated or malformed.
pub fn idempotency_key(headers: &HeaderMap) -> Result<String, ApiError> {
    let mut values = headers.get_all(KEY_HEADER).iter();
    let first = values.next().ok_or(ApiError::MissingKey)?;
    if values.next().is_some() {
        return Err(ApiError::InvalidKey("the header was sent more than once"));
    }
    parse_key(first.as_bytes()).map_err(ApiError::InvalidKey)
}

/// The request's customer: [`ANONYMOUS`] when absent, 400 when malformed.
pub fn customer(headers: &HeaderMap) -> Result<String, ApiError> {
    let mut values = headers.get_all(CUSTOMER_HEADER).iter();
    let Some(first) = values.next() else {
        return Ok(ANONYMOUS.to_string());
    };
    if values.next().is_some() {
        return Err(ApiError::InvalidCustomer(
            "the header was sent more than once",
        ));
    }
    let v = trim_ows(first.as_bytes());
    if v.is_empty() || v.len() > MAX_CUSTOMER_LEN {
        return Err(ApiError::InvalidCustomer("must be 1-128 characters"));
    }
    if !v.iter().all(|&b| visible(b)) {
        return Err(ApiError::InvalidCustomer(
            "must be visible ASCII characters only",
        ));
    }
    Ok(String::from_utf8_lossy(v).into_owned())
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
    fn headers() {
        let mut h = HeaderMap::new();
        assert!(matches!(idempotency_key(&h), Err(ApiError::MissingKey)));
        assert_eq!(customer(&h).unwrap(), ANONYMOUS);
        h.insert(KEY_HEADER, "k1".parse().unwrap());
        h.insert(CUSTOMER_HEADER, "alice".parse().unwrap());
        assert_eq!(idempotency_key(&h).unwrap(), "k1");
        assert_eq!(customer(&h).unwrap(), "alice");
        h.append(KEY_HEADER, "k2".parse().unwrap());
        assert!(matches!(idempotency_key(&h), Err(ApiError::InvalidKey(_))));
        h.insert(
            CUSTOMER_HEADER,
            "x".repeat(MAX_CUSTOMER_LEN + 1).parse().unwrap(),
        );
        assert!(customer(&h).is_err());
    }
}
