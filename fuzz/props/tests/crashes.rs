//! Each bug the fuzz targets found, as a plain named test (the crash inputs themselves
//! replay in `replay.rs`).

use idemkey_server::idem::fingerprint::{canonical, Fingerprinter};
use serde_json::Value;

/// The server's fingerprint under a fixed secret (any secret keeps the properties).
fn fingerprint(v: &Value) -> String {
    Fingerprinter::new(&[42; 32])
        .expect("a 32-byte secret")
        .of(v)
}

/// `server_body` found it: serde_json's default float parsing is not correctly rounded,
/// so a long integer literal read as a float and written back in its shortest form read
/// as another float. The canonical form was then not a fixed point, and one number
/// written two ways (as JavaScript's `JSON.stringify` writes it, and as a long literal)
/// had two fingerprints.
#[test]
fn the_server_canonical_form_of_a_long_number_is_a_fixed_point() {
    for text in [
        "[1111111111111111111111]",
        "[11111111111111111111111111111111111111111111]",
        "{\"amount\":123456789012345678901234567890}",
    ] {
        let v: Value = serde_json::from_str(text).unwrap();
        let mut canon = String::new();
        canonical(&v, &mut canon);
        let back: Value = serde_json::from_str(&canon).unwrap();
        let mut again = String::new();
        canonical(&back, &mut again);
        assert_eq!(again, canon, "{text}");
        assert_eq!(fingerprint(&back), fingerprint(&v), "{text}");
    }
    // JavaScript reads 1111111111111111111111 as 1.1111111111111111e+21: the same payload.
    let js: Value = serde_json::from_str("[1.1111111111111111e+21]").unwrap();
    let long: Value = serde_json::from_str("[1111111111111111111111]").unwrap();
    assert_eq!(fingerprint(&js), fingerprint(&long));
}

/// `server_headers` found it: the sf-string `"\"c"` unquoted to the key `"c`, which sent
/// bare reads as an unterminated quoted string, so that key had no bare spelling (the
/// header's two spellings are meant to be one key). A key may not begin with `"` now.
#[test]
fn a_key_beginning_with_a_quote_is_refused_in_both_spellings() {
    use idemkey_server::http::headers::parse_key;
    assert!(parse_key(br#""\"c""#).is_err());
    assert!(parse_key(br#"  "\"c" "#).is_err());
    assert!(parse_key(b"\"c").is_err());
    assert_eq!(
        parse_key(br#""c\"""#).as_deref(),
        Ok("c\""),
        "a quote inside is fine"
    );
    assert_eq!(parse_key(b"c\"").as_deref(), Ok("c\""));
}
