//! The server's `Idempotency-Key` (bare and sf-string) and `X-Customer-Id` parsers, and
//! the client's header formatter against them.
//!
//! Properties: a parsed key is 1-255 visible ASCII; it re-formats, bare or as the client
//! writes an sf-string, to a value that parses to the same key; a bare value parses to
//! itself (minus surrounding whitespace); a repeated header is refused. A customer id is
//! 1-128 visible ASCII and parses to itself.

use axum::http::{HeaderMap, HeaderValue};
use idemkey::core::header::format_key;
use idemkey::core::options::HeaderFormat;
use idemkey_server::http::headers::{
    customer, idempotency_key, parse_key, CUSTOMER_HEADER, KEY_HEADER, MAX_CUSTOMER_LEN,
    MAX_KEY_LEN,
};
use idemkey_server::http::problem::ApiError;

fn visible(s: &str) -> bool {
    s.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// Parses `data` as a key header value and as a customer header value.
pub fn check(data: &[u8]) {
    let trimmed = trim_end_ows(trim_start_ows(data));
    match parse_key(data) {
        Ok(k) => {
            assert!(
                !k.is_empty() && k.len() <= MAX_KEY_LEN && visible(&k),
                "{k:?}"
            );
            assert_eq!(parse_key(k.as_bytes()).as_ref(), Ok(&k), "bare re-format");
            let sf = format_key(&k, HeaderFormat::SfString);
            assert_eq!(
                parse_key(sf.as_bytes()).as_ref(),
                Ok(&k),
                "sf-string {sf:?}"
            );
            assert_eq!(format_key(&k, HeaderFormat::Plain), k);
            if trimmed.first() != Some(&b'"') {
                assert_eq!(k.as_bytes(), trimmed, "a bare key is the value itself");
            }
        }
        Err(reason) => assert!(!reason.is_empty()),
    }
    let Ok(value) = HeaderValue::from_bytes(data) else {
        return;
    };
    let mut h = HeaderMap::new();
    h.insert(KEY_HEADER, value.clone());
    h.insert(CUSTOMER_HEADER, value.clone());
    assert_eq!(idempotency_key(&h).ok(), parse_key(data).ok());
    match customer(&h) {
        Ok(c) => {
            assert!(
                !c.is_empty() && c.len() <= MAX_CUSTOMER_LEN && visible(&c),
                "{c:?}"
            );
            let mut again = HeaderMap::new();
            again.insert(CUSTOMER_HEADER, HeaderValue::from_str(&c).unwrap());
            assert_eq!(customer(&again).ok().as_ref(), Some(&c));
        }
        Err(e) => assert!(matches!(e, ApiError::InvalidCustomer(_)), "{e:?}"),
    }
    h.append(KEY_HEADER, value.clone());
    h.append(CUSTOMER_HEADER, value);
    assert!(matches!(idempotency_key(&h), Err(ApiError::InvalidKey(_))));
    assert!(matches!(customer(&h), Err(ApiError::InvalidCustomer(_))));
}

fn trim_start_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    s
}

fn trim_end_ows(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}
