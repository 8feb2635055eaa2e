use super::*;

fn fp(s: &str) -> String {
    fingerprint(s).unwrap()
}

#[test]
fn format_is_prefixed_hex() {
    let f = fp(r#"{"amount":1000}"#);
    assert!(f.starts_with("f1:"));
    assert_eq!(f.len(), 3 + 16);
    assert!(f[3..]
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
}

#[test]
fn known_fnv1a_vectors() {
    // Reference values of 64-bit FNV-1a; pin the hash so stored fingerprints stay comparable.
    assert_eq!(fingerprint_canonical(""), "f1:cbf29ce484222325");
    assert_eq!(fingerprint_canonical("a"), "f1:af63dc4c8601ec8c");
    assert_eq!(fingerprint_canonical("foobar"), "f1:85944171f73967e8");
}

#[test]
fn stable_across_calls_and_pinned() {
    let a = fp(r#"{"amount":1000,"currency":"eur"}"#);
    assert_eq!(a, fp(r#"{"amount":1000,"currency":"eur"}"#));
    assert_eq!(
        a,
        fingerprint_canonical(r#"{"amount":1000,"currency":"eur"}"#)
    );
}

#[test]
fn key_order_and_whitespace_do_not_matter() {
    let a = fp(
        r#"{"amount":1000,"currency":"eur","items":[{"sku":"a","qty":1},{"sku":"b","qty":2}],"meta":{"x":1,"y":{"p":1,"q":2}}}"#,
    );
    let b = fp(r#"{ "meta" : { "y" : { "q":2, "p":1 }, "x":1 },
                  "items": [ {"qty":1,"sku":"a"}, {"qty":2, "sku":"b"} ],
                  "currency":"eur", "amount" : 1000 }"#);
    assert_eq!(a, b);
}

#[test]
fn every_other_difference_changes_it() {
    let base = fp(r#"{"amount":1000,"currency":"eur","items":["a","b"],"gift":false,"note":null}"#);
    let variants = [
        r#"{"amount":1001,"currency":"eur","items":["a","b"],"gift":false,"note":null}"#,
        r#"{"amount":"1000","currency":"eur","items":["a","b"],"gift":false,"note":null}"#,
        r#"{"amount":1000,"currency":"EUR","items":["a","b"],"gift":false,"note":null}"#,
        r#"{"amount":1000,"currency":"eur","items":["b","a"],"gift":false,"note":null}"#,
        r#"{"amount":1000,"currency":"eur","items":["a"],"gift":false,"note":null}"#,
        r#"{"amount":1000,"currency":"eur","items":["a","b",null],"gift":false,"note":null}"#,
        r#"{"amount":1000,"currency":"eur","items":"a,b","gift":false,"note":null}"#,
        r#"{"amount":1000,"currency":"eur","items":["a","b"],"gift":true,"note":null}"#,
        r#"{"amount":1000,"currency":"eur","items":["a","b"],"gift":0,"note":null}"#,
        r#"{"amount":1000,"currency":"eur","items":["a","b"],"gift":false,"note":""}"#,
        r#"{"amount":1000,"currency":"eur","items":["a","b"],"gift":false}"#,
        r#"{"amount":1000,"currency":"eur","items":["a","b"],"gift":false,"note":null,"x":1}"#,
        r#"{"Amount":1000,"currency":"eur","items":["a","b"],"gift":false,"note":null}"#,
        r#"[{"amount":1000,"currency":"eur","items":["a","b"],"gift":false,"note":null}]"#,
    ];
    let mut seen = vec![base.clone()];
    for v in variants {
        let f = fp(v);
        assert!(!seen.contains(&f), "{v} collides");
        seen.push(f);
    }
}

#[test]
fn top_level_scalars_are_payloads_too() {
    assert_ne!(fp("1"), fp("\"1\""));
    assert_ne!(fp("null"), fp("false"));
    assert_eq!(fp(" 1 "), fp("1"));
}

#[test]
fn string_content_is_compared_after_unescaping() {
    // The same string written with or without escapes is the same payload.
    assert_eq!(fp(r#"{"a":"é"}"#), fp(r#"{"a":"\u00e9"}"#));
    assert_eq!(fp(r#"{"a":"/"}"#), fp(r#"{"a":"\/"}"#));
    assert_ne!(fp(r#"{"a":"a\nb"}"#), fp(r#"{"a":"a\\nb"}"#));
}

#[test]
fn invalid_json_is_invalid_payload() {
    let e = fingerprint("{\"a\":").unwrap_err();
    assert_eq!(e.code(), "invalid-payload");
    assert_eq!(
        e,
        crate::error::Error::InvalidPayload("unexpected end of input".into())
    );
    assert!(fingerprint("").is_err());
    assert!(fingerprint("undefined").is_err());
}
