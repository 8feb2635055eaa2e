use super::*;

const KEY: &str = "8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f";

#[test]
fn plain_is_the_bare_key() {
    assert_eq!(format_key(KEY, HeaderFormat::Plain), KEY);
}

#[test]
fn sf_string_is_quoted_and_escaped() {
    assert_eq!(
        format_key(KEY, HeaderFormat::SfString),
        format!("\"{KEY}\"")
    );
    assert_eq!(
        format_key(r#"a"b\c"#, HeaderFormat::SfString),
        r#""a\"b\\c""#
    );
    assert_eq!(format_key("", HeaderFormat::SfString), "\"\"");
}

#[test]
fn replayed_detection() {
    for v in ["true", "TRUE", "True", " true ", "\ttrue", "?1", " ?1"] {
        assert!(is_replayed(Some(v)), "{v:?}");
    }
    for v in ["false", "?0", "1", "yes", "", "truex", "\"true\"", "?1;a=1"] {
        assert!(!is_replayed(Some(v)), "{v:?}");
    }
    assert!(!is_replayed(None));
}

#[test]
fn sf_string_parses_back_what_format_key_writes() {
    for key in [KEY, r#"a"b\c"#, "", "x y"] {
        let quoted = format_key(key, HeaderFormat::SfString);
        assert_eq!(
            parse_sf_string(quoted.as_bytes()).unwrap(),
            key.as_bytes(),
            "{quoted}"
        );
    }
    for bad in [
        &b"abc"[..],
        b"\"abc",
        b"\"a\\nb\"",
        b"\"abc\"x",
        b"\"a\x01\"",
    ] {
        assert!(parse_sf_string(bad).is_err(), "{bad:?}");
    }
}
