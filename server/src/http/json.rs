//! JSON bodies parsed strictly: a member name repeated in one object is an
//! error, not "the last one wins". `{"amount":0,"amount":100}` must not charge
//! 100 on one server and 0 on the next proxy that reads it first.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::http::problem::echo;

/// Parses `bytes` as one JSON value; duplicate member names are refused.
/// serde_json's nesting limit (128) still applies, so deep input is an error,
/// never a stack overflow.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = StrictValue.deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Builds a [`Value`] like serde_json's own, but refuses repeated members.
#[derive(Clone, Copy)]
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(StrictValue)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.contains_key(&k) {
                return Err(de::Error::custom(format_args!(
                    "duplicate member `{}`",
                    echo(&k)
                )));
            }
            let v = map.next_value_seed(StrictValue)?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_like_serde_json() {
        for text in [
            r#"{"amount":4200,"currency":"usd","items":[{"sku":"a","qty":2}],"x":null}"#,
            r#"[1,-2,3.5,1e3,true,false,"\u00e9",{}]"#,
            "18446744073709551615",
            " \"s\" ",
        ] {
            let want: Value = serde_json::from_str(text).unwrap();
            assert_eq!(parse_strict(text.as_bytes()).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn refuses_duplicate_members_at_any_depth() {
        for text in [
            r#"{"amount":0,"amount":100}"#,
            r#"{"a":{"b":1,"b":1}}"#,
            r#"{"items":[{"sku":"a","sku":"b"}]}"#,
            r#"{"a":1,"\u0061":2}"#,
        ] {
            let e = parse_strict(text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains("duplicate member"), "{text}: {e}");
        }
        let long = "k".repeat(10_000);
        let e = parse_strict(format!(r#"{{"{long}":1,"{long}":2}}"#).as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.len() < 200,
            "the error echoes the whole name: {} bytes",
            e.len()
        );
    }

    #[test]
    fn deep_and_broken_input_is_an_error() {
        assert!(parse_strict("[".repeat(100_000).as_bytes()).is_err());
        assert!(parse_strict(r#"{"a":"#.repeat(10_000).as_bytes()).is_err());
        assert!(parse_strict(b"{} x").is_err());
        assert!(parse_strict(b"\xef\xbb\xbf{}").is_err());
        assert!(parse_strict(b"{\"a\":\"\xff\"}").is_err());
        assert_eq!(parse_strict(b"{}").unwrap(), json!({}));
    }
}
