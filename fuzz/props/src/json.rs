//! The client's JSON parser and canonical writer, against serde_json as a second opinion.
//!
//! Properties: the compact writer round-trips; the canonical form is idempotent; the
//! fingerprint does not change when object members are reordered; the parser accepts what
//! serde_json accepts, save the refusals it makes on purpose, and reads the same values.

use idemkey::core::fingerprint::{fingerprint, fingerprint_canonical};
use idemkey::core::json::{Json, MAX_DEPTH};
use serde_json::Value;

/// Parses `data` (when UTF-8) and checks every property of the value it gives.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ours = Json::parse(text);
    let theirs = serde_json::from_str::<Value>(text);
    let v = match (ours, theirs) {
        (Ok(v), Ok(t)) => {
            assert_same(&v, &t, text);
            v
        }
        (Ok(v), Err(e)) => {
            // serde_json refuses numbers beyond f64 (1e400); we keep the token as written.
            assert!(
                e.to_string().contains("number out of range"),
                "we accept {text:?}, serde_json says {e}"
            );
            v
        }
        (Err(ours), Ok(_)) => {
            // Deliberate refusals: duplicate keys (ambiguous fingerprint), deep nesting.
            assert!(
                ours == "duplicate object key" || ours.starts_with("nesting deeper"),
                "we refuse {text:?} ({ours}), serde_json accepts it"
            );
            if ours.starts_with("nesting deeper") {
                assert!(depth_of(text) > MAX_DEPTH, "{text:?} is not deeper than 64");
            }
            return;
        }
        (Err(_), Err(_)) => return,
    };
    check_value(&v, text, data.first().copied().unwrap_or(0));
}

/// The writer properties of a parsed value `v` whose source text was `text`.
fn check_value(v: &Json, text: &str, seed: u8) {
    let compact = write(v, false);
    assert_eq!(
        Json::parse(&compact).as_ref(),
        Ok(v),
        "compact form {compact:?} reads back differently"
    );
    let canon = write(v, true);
    let again = Json::parse(&canon).unwrap_or_else(|e| panic!("canonical {canon:?}: {e}"));
    assert_eq!(
        write(&again, true),
        canon,
        "canonical form is not idempotent"
    );
    let fp = fingerprint(text).expect("a parsed text fingerprints");
    assert_eq!(fp, fingerprint_canonical(&canon));
    let shuffled = write(&reorder(v, seed), false);
    assert_eq!(
        fingerprint(&shuffled).as_ref(),
        Ok(&fp),
        "reordering members changed the fingerprint: {text:?} vs {shuffled:?}"
    );
}

fn write(v: &Json, canonical: bool) -> String {
    let mut s = String::new();
    if canonical {
        v.write_canonical(&mut s);
    } else {
        v.write(&mut s);
    }
    s
}

/// `v` with every object's members rotated and, for odd seeds, reversed.
pub fn reorder(v: &Json, seed: u8) -> Json {
    match v {
        Json::Arr(items) => Json::Arr(items.iter().map(|i| reorder(i, seed)).collect()),
        Json::Obj(m) => {
            let mut m: Vec<(String, Json)> = m
                .iter()
                .map(|(k, v)| (k.clone(), reorder(v, seed)))
                .collect();
            if !m.is_empty() {
                let n = m.len();
                m.rotate_left(seed as usize % n);
            }
            if seed & 1 == 1 {
                m.reverse();
            }
            Json::Obj(m)
        }
        other => other.clone(),
    }
}

/// Our value equals serde_json's: numbers compared as serde_json reads our token.
fn assert_same(ours: &Json, theirs: &Value, text: &str) {
    let same = match (ours, theirs) {
        (Json::Null, Value::Null) => true,
        (Json::Bool(a), Value::Bool(b)) => a == b,
        (Json::Num(n), Value::Number(_)) => {
            serde_json::from_str::<Value>(n).ok().as_ref() == Some(theirs)
        }
        (Json::Str(a), Value::String(b)) => a == b,
        (Json::Arr(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "array length in {text:?}");
            a.iter().zip(b).for_each(|(x, y)| assert_same(x, y, text));
            true
        }
        (Json::Obj(a), Value::Object(b)) => {
            assert_eq!(a.len(), b.len(), "member count in {text:?}");
            for (k, x) in a {
                let y = b
                    .get(k)
                    .unwrap_or_else(|| panic!("member {k:?} missing in {text:?}"));
                assert_same(x, y, text);
            }
            true
        }
        _ => false,
    };
    assert!(same, "{ours:?} vs {theirs:?} in {text:?}");
}

/// The deepest bracket nesting of a JSON text (brackets inside strings not counted).
fn depth_of(text: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for c in text.chars() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}
