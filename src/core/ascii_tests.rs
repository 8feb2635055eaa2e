use super::*;

#[test]
fn digits_reads_plain_decimal_only() {
    assert_eq!(digits("0"), Some(0));
    assert_eq!(digits("007"), Some(7));
    assert_eq!(digits("18446744073709551615"), Some(u64::MAX));
    for bad in [
        "",
        "+1",
        "-1",
        " 1",
        "1 ",
        "1.0",
        "1e3",
        "0x10",
        "١",
        "18446744073709551616",
    ] {
        assert_eq!(digits(bad), None, "{bad:?}");
    }
}

#[test]
fn digits_agrees_with_parse_on_digit_strings() {
    for s in ["1", "42", "9999999999999999", "99999999999999999999"] {
        assert_eq!(digits(s), s.parse().ok(), "{s:?}");
    }
}

#[test]
fn rsplit_byte_splits_at_the_last_separator() {
    assert_eq!(rsplit_byte("a:b:c", b':'), Some(("a:b", "c")));
    assert_eq!(rsplit_byte(":", b':'), Some(("", "")));
    assert_eq!(rsplit_byte("é:ü", b':'), Some(("é", "ü")));
    assert_eq!(rsplit_byte("abc", b':'), None);
    assert_eq!(rsplit_byte("", b'|'), None);
    for s in ["x|y|1", "|", "ñ|ß", "a||"] {
        assert_eq!(rsplit_byte(s, b'|'), s.rsplit_once('|'), "{s:?}");
    }
}
