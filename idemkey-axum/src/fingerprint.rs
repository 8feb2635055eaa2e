//! Payload fingerprints: HMAC-SHA256, under the application's secret, of a
//! canonical JSON rendering.
//!
//! Keyed because the body holds the card number: a plain hash, stored with
//! the key, would let anyone who reads it
//! test guesses of a card number offline (there are few enough numbers under
//! a known prefix). The secret is the same for every instance on a database
//! and across restarts (see [`Fingerprinter`]), or a retry would be a 422.
//!
//! A retry must be recognised even when the client serialised its object with
//! another key order or whitespace, so the fingerprint is taken over a canonical
//! form (object members sorted by key, recursively; no whitespace). Any other
//! difference (a value, an array order, `1` vs `1.0`) is a different payload and
//! makes the server answer 422. The canonical writer is explicit rather than
//! relying on serde_json's map ordering, which a workspace feature flag
//! (`preserve_order`) could silently change.

use std::fmt::Write;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::error::Error;

/// Bytes a secret must have at least (HMAC-SHA256's own output size).
pub const MIN_SECRET: usize = 32;

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

/// Fingerprints payloads under one secret; cheap to clone.
///
/// Give every instance on one database, and every restart, the same secret
/// (from a file they share, say, or kept in the database the first time),
/// or a retry that reaches another instance is a `422`.
#[derive(Clone)]
pub struct Fingerprinter {
    mac: Hmac<Sha256>,
}

impl Fingerprinter {
    /// A fingerprinter keyed with `secret` (at least [`MIN_SECRET`] bytes).
    pub fn new(secret: &[u8]) -> Result<Fingerprinter, Error> {
        if secret.len() < MIN_SECRET {
            return Err(Error::InvalidSetting(format!(
                "a fingerprint secret needs at least {MIN_SECRET} bytes, this one has {}",
                secret.len()
            )));
        }
        let mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret)
            .map_err(|e| Error::InvalidSetting(format!("fingerprint secret: {e}")))?;
        Ok(Fingerprinter { mac })
    }

    /// `hmac-sha256:` followed by the lowercase hex HMAC of the canonical form.
    pub fn of(&self, v: &Value) -> String {
        let mut text = String::new();
        canonical(v, &mut text);
        let mut mac = self.mac.clone();
        mac.update(text.as_bytes());
        let digest = mac.finalize().into_bytes();
        let mut out = String::with_capacity(12 + 64);
        out.push_str("hmac-sha256:");
        for b in digest.iter() {
            // Writing to a String cannot fail.
            let _ = write!(out, "{b:02x}");
        }
        out
    }
}

/// A fresh random secret of [`MIN_SECRET`] bytes, from the operating system.
pub fn random_secret() -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut secret = vec![0u8; MIN_SECRET];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut secret))
        .map_err(|e| format!("cannot read /dev/urandom for a fingerprint secret: {e}"))?;
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"idemkey-test-secret-0123456789abcdef";

    fn fp(s: &str) -> String {
        Fingerprinter::new(SECRET)
            .unwrap()
            .of(&serde_json::from_str(s).unwrap())
    }

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        let a = fp(r#"{"amount":100,"currency":"usd","items":[{"sku":"a","qty":1}]}"#);
        let b = fp("{ \"items\" : [ {\"qty\":1, \"sku\":\"a\"} ],\n \"currency\":\"usd\", \"amount\": 100 }");
        assert_eq!(a, b);
        assert!(a.starts_with("hmac-sha256:") && a.len() == 12 + 64);
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
        // HMAC-SHA256(SECRET, "{}") as Python's hmac module computes it: pins the
        // function, the key and the hex encoding.
        assert_eq!(
            fp("{}"),
            "hmac-sha256:196c2d5acd83fe09695bd789dd9ad19110db171ecd82178576cc03fe6d82b988"
        );
    }

    #[test]
    fn another_secret_is_another_fingerprint_and_short_secrets_are_refused() {
        let v = serde_json::json!({"amount": 1, "card": "4242424242424242"});
        let a = Fingerprinter::new(SECRET).unwrap().of(&v);
        let b = Fingerprinter::new(&[7u8; 32]).unwrap().of(&v);
        assert_ne!(a, b);
        assert!(Fingerprinter::new(&[7u8; 31]).is_err());
        let r = random_secret().unwrap();
        assert_eq!(r.len(), MIN_SECRET);
        assert_ne!(r, random_secret().unwrap());
    }
}
