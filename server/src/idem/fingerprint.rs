//! Payload fingerprints: SHA-256 of a canonical JSON rendering.
//!
//! A retry must be recognised even when the client serialised its object with
//! another key order or whitespace, so the fingerprint is taken over a canonical
//! form (object members sorted by key, recursively; no whitespace). Any other
//! difference (a value, an array order, `1` vs `1.0`) is a different payload and
//! makes the server answer 422. The canonical writer is explicit rather than
//! relying on serde_json's map ordering, which a workspace feature flag
//! (`preserve_order`) could silently change.

use std::fmt::Write;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes `v` canonically into `out`.
pub fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            // Scalars: serde_json's own rendering is deterministic.
            out.push_str(&v.to_string());
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, val)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(val, out);
            }
            out.push('}');
        }
    }
}

/// `sha256:` followed by the lowercase hex digest of the canonical form.
pub fn fingerprint(v: &Value) -> String {
    let mut text = String::new();
    canonical(v, &mut text);
    let digest = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.iter() {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(s: &str) -> String {
        fingerprint(&serde_json::from_str(s).unwrap())
    }

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        let a = fp(r#"{"amount":100,"currency":"usd","items":[{"sku":"a","qty":1}]}"#);
        let b = fp("{ \"items\" : [ {\"qty\":1, \"sku\":\"a\"} ],\n \"currency\":\"usd\", \"amount\": 100 }");
        assert_eq!(a, b);
        assert!(a.starts_with("sha256:") && a.len() == 7 + 64);
    }

    #[test]
    fn values_and_array_order_matter() {
        let base = fp(r#"{"amount":100,"currency":"usd"}"#);
        assert_ne!(base, fp(r#"{"amount":101,"currency":"usd"}"#));
        assert_ne!(base, fp(r#"{"amount":100.0,"currency":"usd"}"#));
        assert_ne!(base, fp(r#"{"amount":100,"currency":"usd","card":null}"#));
        assert_ne!(fp("[1,2]"), fp("[2,1]"));
        assert_ne!(fp(r#"{"a":"1"}"#), fp(r#"{"a":1}"#));
    }

    #[test]
    fn canonical_form_is_sorted_and_compact() {
        let v: Value = serde_json::from_str(r#"{"b":{"d":1,"c":[true,null]},"a":"x\"y"}"#).unwrap();
        let mut s = String::new();
        canonical(&v, &mut s);
        assert_eq!(s, r#"{"a":"x\"y","b":{"c":[true,null],"d":1}}"#);
    }

    #[test]
    fn known_digest() {
        // sha256("{}") — pins the hash function and the hex encoding.
        assert_eq!(
            fp("{}"),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
