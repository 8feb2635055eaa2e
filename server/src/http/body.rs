//! Reading and validating request bodies.
//!
//! Bodies are read here rather than with axum's `Json` extractor so that every
//! refusal (wrong content type, too large, not JSON, wrong shape) is a
//! problem+json document with a precise detail.

use axum::body::Body;
use axum::http::{header, HeaderMap};
use http_body_util::{BodyExt, LengthLimitError};
use serde_json::Value;
use tower_http::timeout::TimeoutError;

use crate::http::json::parse_strict;
use crate::http::limits::BODY_LIMIT;
use crate::http::problem::ApiError;
use crate::idem::input::ChargeInput;

/// Largest accepted charge amount, in minor units.
pub const MAX_AMOUNT: u64 = 99_999_999;
/// Accepted currencies (ISO 4217, any case on input, lowercase on output).
pub const CURRENCIES: &[&str] = &["usd", "eur", "gbp", "brl", "jpy", "chf", "cad", "aud"];
/// Most line items accepted.
const MAX_ITEMS: usize = 100;

/// `application/json` or any `application/*+json`, parameters ignored.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(v) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = v
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Reads the body as JSON: 415, 413 (over the limit of the body-limit
/// layer), 408 (not all there by the body-deadline layer's deadline) or 400
/// (broken framing, not JSON, or a member name repeated) when that fails.
pub async fn read_json(headers: &HeaderMap, body: Body) -> Result<Value, ApiError> {
    if !is_json(headers) {
        return Err(ApiError::UnsupportedMediaType);
    }
    let buf = body.collect().await.map_err(body_error)?.to_bytes();
    parse_strict(&buf)
        .map_err(|e| ApiError::InvalidBody(format!("the body is not valid JSON: {e}")))
}

/// What a failed body read means to the client. Each layer between the
/// socket and the handler may have boxed the error once more in an
/// `axum::Error`: the cause is the innermost one.
fn body_error(e: axum::Error) -> ApiError {
    let mut e = e.into_inner();
    loop {
        match e.downcast::<axum::Error>() {
            Ok(wrapped) => e = wrapped.into_inner(),
            Err(cause) => {
                e = cause;
                break;
            }
        }
    }
    if e.is::<LengthLimitError>() {
        ApiError::PayloadTooLarge { limit: BODY_LIMIT }
    } else if e.is::<TimeoutError>() {
        ApiError::RequestTimeout("the request body did not arrive within 10 s")
    } else {
        ApiError::InvalidBody("the request body could not be read".into())
    }
}

fn bad(msg: &str) -> ApiError {
    ApiError::InvalidBody(msg.to_string())
}

/// Validates `{ amount, currency, items?, card? }`. Unknown members are
/// accepted (and count in the fingerprint).
pub fn validate_charge(raw: Value) -> Result<ChargeInput, ApiError> {
    let obj = raw
        .as_object()
        .ok_or_else(|| bad("the body must be a JSON object"))?;
    let amount = match obj.get("amount") {
        None => return Err(bad("`amount` is required")),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_AMOUNT).contains(n))
            .ok_or_else(|| {
                bad("`amount` must be a positive integer number of minor units (at most 99999999)")
            })?,
    };
    let currency = match obj.get("currency") {
        None => return Err(bad("`currency` is required")),
        Some(Value::String(s)) => {
            let c = s.to_ascii_lowercase();
            if !CURRENCIES.contains(&c.as_str()) {
                return Err(ApiError::InvalidBody(format!(
                    "unknown `currency`; use one of {}",
                    CURRENCIES.join(", ")
                )));
            }
            c
        }
        Some(_) => return Err(bad("`currency` must be a string")),
    };
    match obj.get("items") {
        None => {}
        Some(Value::Array(items)) => {
            if items.len() > MAX_ITEMS {
                return Err(bad("`items` may hold at most 100 entries"));
            }
            if !items.iter().all(Value::is_object) {
                return Err(bad("every entry of `items` must be an object"));
            }
        }
        Some(_) => return Err(bad("`items` must be an array")),
    }
    let card = match obj.get("card") {
        None => None,
        Some(Value::String(s)) => {
            let digits: String = s.chars().filter(|c| *c != ' ' && *c != '-').collect();
            if !(12..=19).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(
                    "`card` must be 12-19 digits (spaces and dashes allowed)",
                ));
            }
            Some(digits)
        }
        Some(_) => return Err(bad("`card` must be a string")),
    };
    Ok(ChargeInput {
        raw,
        amount,
        currency,
        card,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_the_documented_shape() {
        let c = validate_charge(json!({"amount": 4200, "currency": "EUR", "items": [{"sku": "a"}], "card": "4000 0000 0000 0002"})).unwrap();
        assert_eq!(
            (c.amount, c.currency.as_str(), c.card.as_deref()),
            (4200, "eur", Some("4000000000000002"))
        );
        assert!(validate_charge(json!({"amount": 1, "currency": "usd", "extra": true})).is_ok());
    }

    #[test]
    fn refuses_wrong_types_and_values() {
        for bad in [
            json!(null),
            json!([]),
            json!("x"),
            json!({}),
            json!({"amount": "12", "currency": "usd"}),
            json!({"amount": 0, "currency": "usd"}),
            json!({"amount": -5, "currency": "usd"}),
            json!({"amount": 1.5, "currency": "usd"}),
            json!({"amount": 12.0, "currency": "usd"}),
            json!({"amount": 100000000, "currency": "usd"}),
            json!({"amount": 1}),
            json!({"amount": 1, "currency": 840}),
            json!({"amount": 1, "currency": "xyz"}),
            json!({"amount": 1, "currency": "usd", "items": {}}),
            json!({"amount": 1, "currency": "usd", "items": [1]}),
            json!({"amount": 1, "currency": "usd", "card": 4242}),
            json!({"amount": 1, "currency": "usd", "card": "42x"}),
            json!({"amount": 1, "currency": "usd", "items": null}),
        ] {
            assert!(
                validate_charge(bad.clone()).is_err(),
                "{bad} should be refused"
            );
        }
    }

    #[test]
    fn debug_output_masks_the_card() {
        let c =
            validate_charge(json!({"amount": 1, "currency": "usd", "card": "4242 4242 4242 4242"}))
                .unwrap();
        let shown = format!("{c:?}");
        assert!(
            shown.contains("****4242") && !shown.contains("424242"),
            "{shown}"
        );
    }

    #[test]
    fn content_types() {
        let mut h = HeaderMap::new();
        assert!(!is_json(&h));
        for (ct, ok) in [
            ("application/json", true),
            ("Application/JSON; charset=utf-8", true),
            ("application/merge-patch+json", true),
            ("text/plain", false),
            ("application/jsonx", false),
        ] {
            h.insert(header::CONTENT_TYPE, ct.parse().unwrap());
            assert_eq!(is_json(&h), ok, "{ct}");
        }
    }
}
