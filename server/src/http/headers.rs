//! Parsing of the `Idempotency-Key` and `X-Customer-Id` request headers.
//!
//! The key is idemkey-axum's (`parse_key`): it may be sent bare
//! (`Idempotency-Key: 8e03…`, Stripe style) or as an RFC 8941 sf-string (`Idempotency-Key: "8e03…"`, the IETF draft's form),
//! parsed by the client crate's own `parse_sf_string`. Both
//! spellings of one key are the same key. Either way the key itself must be
//! 1–255 visible ASCII characters (0x21–0x7E): anything else is ambiguous to
//! log, to store and to compare, so it is refused with a 400.

use axum::http::HeaderMap;
pub use idemkey_axum::implementers::parse_key;
use idemkey_axum::implementers::{trim_ows, visible};
use idemkey_axum::IdempotencyKey;
pub use idemkey_axum::{KEY_HEADER, MAX_KEY_LEN};

use crate::http::problem::ApiError;

/// Longest accepted customer id, in characters.
pub const MAX_CUSTOMER_LEN: usize = 128;
/// Customer used when `X-Customer-Id` is absent.
pub const ANONYMOUS: &str = "anonymous";

/// Header scoping keys and ledgers to one customer.
pub const CUSTOMER_HEADER: &str = "x-customer-id";

/// The request's idempotency key: 400 when missing, repeated or malformed.
pub fn idempotency_key(headers: &HeaderMap) -> Result<String, ApiError> {
    IdempotencyKey::from_headers(headers)
        .map(|k| k.0)
        .map_err(ApiError::from)
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

    /// The browser module writes what idemkey-axum reads: each spelling of
    /// every key the module may send is that key, and the replay header is
    /// the one the module reads.
    #[test]
    fn the_client_and_the_crate_agree() {
        use idemkey::core::header::{format_key, REPLAYED_HEADER};
        use idemkey::core::options::HeaderFormat;
        for key in [
            "8e03978e-40d5-43e8-bc93-6894a57f9324",
            r#"a"b\c"#,
            "!~",
            "x",
        ] {
            for fmt in [HeaderFormat::Plain, HeaderFormat::SfString] {
                let sent = format_key(key, fmt);
                assert_eq!(parse_key(sent.as_bytes()).as_deref(), Ok(key), "{sent}");
            }
        }
        assert_eq!(idemkey_axum::REPLAYED, REPLAYED_HEADER);
    }
}
