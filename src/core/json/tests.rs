use super::*;

fn p(s: &str) -> Json {
    Json::parse(s).unwrap()
}

fn err(s: &str) -> String {
    Json::parse(s).unwrap_err()
}

fn compact(s: &str) -> String {
    let mut o = String::new();
    p(s).write(&mut o);
    o
}

fn canon(s: &str) -> String {
    let mut o = String::new();
    p(s).write_canonical(&mut o);
    o
}

#[test]
fn scalars() {
    assert_eq!(p("null"), Json::Null);
    assert_eq!(p("true"), Json::Bool(true));
    assert_eq!(p(" false "), Json::Bool(false));
    assert_eq!(p("\"hi\""), Json::Str("hi".into()));
    assert_eq!(p("0"), Json::Num("0".into()));
}

#[test]
fn numbers_keep_their_token() {
    for n in [
        "0",
        "-0",
        "1",
        "-12",
        "3.25",
        "1e5",
        "1E+5",
        "-2.5e-3",
        "123456789012345678901234567890",
    ] {
        assert_eq!(p(n), Json::Num(n.into()), "{n}");
        assert_eq!(compact(n), n);
    }
}

#[test]
fn bad_numbers() {
    for n in [
        "01",
        "-",
        "+1",
        "1.",
        ".5",
        "1e",
        "1e+",
        "-a",
        "0x10",
        "NaN",
        "Infinity",
        "-Infinity",
        "1.e3",
    ] {
        assert!(Json::parse(n).is_err(), "{n} should be rejected");
    }
    assert_eq!(err("01"), "leading zero in number");
}

#[test]
fn escapes() {
    assert_eq!(
        p(r#""\" \\ \/ \b \f \n \r \t""#),
        Json::Str("\" \\ / \u{8} \u{c} \n \r \t".into())
    );
    assert_eq!(p(r#""\u0041\u00e9\u20AC""#), Json::Str("Aé€".into()));
    assert_eq!(p(r#""\u0000""#), Json::Str("\0".into()));
}

#[test]
fn surrogate_pairs() {
    assert_eq!(p(r#""\ud83d\ude00""#), Json::Str("😀".into()));
    assert_eq!(p(r#""\uD834\uDD1E""#), Json::Str("𝄞".into()));
    assert_eq!(p("\"😀 raw\""), Json::Str("😀 raw".into()));
    assert_eq!(err(r#""\ud83d""#), "lone surrogate in \\u escape");
    assert_eq!(err(r#""\ud83dx""#), "lone surrogate in \\u escape");
    assert_eq!(err(r#""\ude00""#), "lone surrogate in \\u escape");
    assert_eq!(err(r#""\ud83d\u0041""#), "lone surrogate in \\u escape");
}

#[test]
fn bad_escapes() {
    assert_eq!(err(r#""\x""#), "invalid escape");
    assert_eq!(err(r#""\u12""#), "invalid \\u escape");
    assert_eq!(err(r#""\u12g4""#), "invalid \\u escape");
    assert_eq!(err("\"\\"), "unterminated string");
}

#[test]
fn control_characters_must_be_escaped() {
    for c in ['\0', '\n', '\t', '\r', '\u{1f}'] {
        let s = format!("\"a{c}b\"");
        assert_eq!(err(&s), "control character in string");
    }
    // DEL and non-ASCII are fine raw.
    assert_eq!(p("\"\u{7f}é\""), Json::Str("\u{7f}é".into()));
}

#[test]
fn structures() {
    let v = p(r#" { "a" : [1, {"b": null}, "x"], "c": {} , "d": [] } "#);
    assert_eq!(
        v.get("a").unwrap(),
        &Json::Arr(vec![
            Json::Num("1".into()),
            Json::Obj(vec![("b".into(), Json::Null)]),
            Json::Str("x".into()),
        ])
    );
    assert_eq!(v.get("c"), Some(&Json::Obj(vec![])));
    assert_eq!(v.get("d"), Some(&Json::Arr(vec![])));
    assert_eq!(v.get("zz"), None);
    assert_eq!(Json::Null.get("a"), None);
}

#[test]
fn structural_errors() {
    for s in [
        "",
        " ",
        "[",
        "[1",
        "[1,",
        "[1,]",
        "[,1]",
        "{",
        "{\"a\"",
        "{\"a\":",
        "{\"a\":1,}",
        "{a:1}",
        "{\"a\" 1}",
        "{\"a\":1 \"b\":2}",
        "[1 2]",
        "\"abc",
        "tru",
        "nul",
        "falsey",
        "}",
        "]",
        "'a'",
    ] {
        assert!(Json::parse(s).is_err(), "{s:?} should be rejected");
    }
    assert_eq!(err(""), "unexpected end of input");
    assert_eq!(err("[1"), "unexpected end of input");
    assert_eq!(err("{\"a\":1"), "unexpected end of input");
    assert_eq!(err("[1,"), "unexpected end of input");
    assert_eq!(err("\"abc"), "unterminated string");
    // After an item: `,` or this container's own closer, nothing else.
    assert_eq!(err("[1 2]"), "expected `,` or `]`");
    assert_eq!(err("[1}"), "expected `,` or `]`");
    assert_eq!(err("{\"a\":1 \"b\":2}"), "expected `,` or `}`");
    assert_eq!(err("{\"a\":1]"), "expected `,` or `}`");
    assert_eq!(err("[[1},2]"), "expected `,` or `]`");
    assert_eq!(err("{\"a\":{\"b\":1]}"), "expected `,` or `}`");
    assert!(Json::parse("[ 1 , [ ] , { \"a\" : [ 2 ] } ]").is_ok());
}

#[test]
fn trailing_garbage() {
    for s in [
        "1 2",
        "{} x",
        "[]]",
        "null,",
        "\"a\"\"b\"",
        "true false",
        "{}\u{0}",
    ] {
        assert_eq!(err(s), "trailing characters after the JSON value", "{s:?}");
    }
    assert!(Json::parse("{} \n\t\r ").is_ok());
}

#[test]
fn whitespace_is_only_the_four_json_ones() {
    assert!(Json::parse("\u{a0}1").is_err());
    assert!(Json::parse("\u{feff}1").is_err());
    assert!(Json::parse("\u{c}1").is_err());
}

#[test]
fn duplicate_keys_are_rejected() {
    assert_eq!(err(r#"{"a":1,"a":2}"#), "duplicate object key");
    assert!(Json::parse(r#"{"a":1,"b":{"a":2}}"#).is_ok());
    // Compared after unescaping, at any depth: what the canonical writer's unstable sort
    // relies on (no two keys of one object ever compare equal).
    assert_eq!(err(r#"{"a":1,"\u0061":2}"#), "duplicate object key");
    assert_eq!(err(r#"{"é":1,"\u00e9":2}"#), "duplicate object key");
    assert_eq!(err(r#"{"😀":1,"\ud83d\ude00":2}"#), "duplicate object key");
    assert_eq!(err(r#"[{"x":{"k":1,"k":1}}]"#), "duplicate object key");
}

#[test]
fn canonical_order_of_many_keys_does_not_depend_on_input_order() {
    // Enough keys that the sort is not a trivial insertion sort, in several input orders.
    let keys: Vec<String> = (0..40)
        .map(|i| match i % 4 {
            0 => format!("k{i:02}"),
            1 => format!("K{i}"),
            2 => format!("😀{i}"),
            _ => format!("｡{i}"),
        })
        .collect();
    let obj = |order: &[usize]| {
        let mut s = String::from("{");
        for (n, &i) in order.iter().enumerate() {
            if n > 0 {
                s.push(',');
            }
            s.push_str(&format!("\"{}\":{i}", keys[i]));
        }
        s.push('}');
        s
    };
    let fwd: Vec<usize> = (0..keys.len()).collect();
    let rev: Vec<usize> = fwd.iter().rev().copied().collect();
    let shuffled: Vec<usize> = (0..keys.len()).map(|i| (i * 17 + 5) % keys.len()).collect();
    let want = canon(&obj(&fwd));
    assert_eq!(canon(&obj(&rev)), want);
    assert_eq!(canon(&obj(&shuffled)), want);
    // Sorted by UTF-16 units: astral (surrogates, 0xD83D) before U+FF61.
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let pos = |k: &str| want.find(&format!("\"{k}\"")).unwrap();
    for w in sorted.windows(2) {
        assert!(pos(&w[0]) < pos(&w[1]), "{} before {}", w[0], w[1]);
    }
}

#[test]
fn nesting_limit() {
    let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
    assert!(Json::parse(&ok).is_ok());
    let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
    assert_eq!(err(&deep), "nesting deeper than 64 levels");
    let objs = "{\"a\":".repeat(MAX_DEPTH + 1) + "1" + &"}".repeat(MAX_DEPTH + 1);
    assert_eq!(err(&objs), "nesting deeper than 64 levels");
    // Far beyond the limit must fail cleanly, not overflow the stack.
    let huge = "[".repeat(100_000);
    assert_eq!(err(&huge), "nesting deeper than 64 levels");
}

#[test]
fn compact_writer_round_trips() {
    let src = r#" { "b" : [ 1 , 2.5e3 , true , null ] , "a" : "x\"y\\z\n\u0001\u00e9😀" } "#;
    let out = compact(src);
    assert_eq!(out, r#"{"b":[1,2.5e3,true,null],"a":"x\"y\\z\n\u0001é😀"}"#);
    assert_eq!(p(&out), p(src));
}

#[test]
fn writer_escapes_like_jcs() {
    let mut o = String::new();
    write_str("\u{8}\u{c}\n\r\t\u{1}\u{1f}\"\\/\u{7f}é", &mut o);
    assert_eq!(o, "\"\\b\\f\\n\\r\\t\\u0001\\u001f\\\"\\\\/\u{7f}é\"");
}

#[test]
fn canonical_sorts_keys_recursively_and_ignores_whitespace() {
    let a = canon(r#"{"b":1,"a":{"d":[{"z":1,"y":2}],"c":2}}"#);
    let b = canon("{ \"a\" : { \"c\" : 2 , \"d\" : [ { \"y\" : 2, \"z\" : 1 } ] }, \n\"b\":1 }");
    assert_eq!(a, r#"{"a":{"c":2,"d":[{"y":2,"z":1}]},"b":1}"#);
    assert_eq!(a, b);
    // Arrays keep their order.
    assert_eq!(canon("[3,1,2]"), "[3,1,2]");
}

#[test]
fn canonical_order_is_utf16_code_units() {
    // U+FF61 sorts after U+1F600 by bytes but before it by UTF-16 (0xD83D < 0xFF61).
    assert_eq!(canon(r#"{"｡":1,"😀":2}"#), r#"{"😀":2,"｡":1}"#);
    assert_eq!(
        canon(r#"{"b":1,"B":2,"a":3,"":4,"aa":5}"#),
        r#"{"":4,"B":2,"a":3,"aa":5,"b":1}"#
    );
}

#[test]
fn utf16_cmp_agrees_with_comparing_the_utf16_code_units() {
    // Each edge of UTF-8's and UTF-16's encodings, alone and in pairs.
    let chars = [
        "a",
        "\u{7f}",
        "\u{80}",
        "\u{7ff}",
        "\u{800}",
        "\u{d7ff}",
        "\u{e000}",
        "\u{ff61}",
        "\u{ffff}",
        "\u{10000}",
        "\u{1f600}",
        "\u{10ffff}",
    ];
    let mut strings = vec![String::new()];
    for a in chars {
        strings.push(a.into());
        for b in chars {
            strings.push(format!("{a}{b}"));
        }
    }
    for a in &strings {
        for b in &strings {
            let want = a.encode_utf16().cmp(b.encode_utf16());
            assert_eq!(super::utf16_cmp(a, b), want, "{a:?} vs {b:?}");
        }
    }
}

#[test]
fn accessors() {
    let v = p(
        r#"{"s":"x","n":42,"f":1.5,"neg":-1,"e":1e3,"big":18446744073709551616,"b":true,"z":null}"#,
    );
    assert_eq!(v.get("s").unwrap().as_str(), Some("x"));
    assert_eq!(v.get("n").unwrap().as_str(), None);
    assert_eq!(v.get("n").unwrap().as_u64(), Some(42));
    assert_eq!(v.get("f").unwrap().as_u64(), None);
    assert_eq!(v.get("neg").unwrap().as_u64(), None);
    assert_eq!(v.get("e").unwrap().as_u64(), None);
    assert_eq!(v.get("big").unwrap().as_u64(), None);
    assert_eq!(v.get("f").unwrap().as_f64(), Some(1.5));
    assert_eq!(v.get("neg").unwrap().as_f64(), Some(-1.0));
    assert_eq!(v.get("e").unwrap().as_f64(), Some(1000.0));
    assert_eq!(v.get("s").unwrap().as_f64(), None);
    assert_eq!(v.get("b").unwrap().as_bool(), Some(true));
    assert_eq!(v.get("s").unwrap().as_bool(), None);
    assert!(v.get("z").unwrap().is_null());
    assert!(!v.get("b").unwrap().is_null());
}

#[test]
fn push_u64_digits() {
    for n in [0u64, 7, 10, 1234567890, u64::MAX] {
        let mut s = String::new();
        push_u64(&mut s, n);
        assert_eq!(s, n.to_string());
    }
}
