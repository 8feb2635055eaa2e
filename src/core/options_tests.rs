use super::*;

/// The minimal valid options, changed by `f`.
fn with(f: impl FnOnce(&mut RawOptions)) -> RawOptions {
    let mut r = RawOptions {
        scope: Some("cart-42".into()),
        endpoint: Some("/api/charges".into()),
        ..RawOptions::default()
    };
    f(&mut r);
    r
}

fn ok(f: impl FnOnce(&mut RawOptions)) -> Options {
    Options::validate(&with(f)).unwrap()
}

/// Validates, expecting an error naming `option` (its JS name); returns the message.
fn fails(option: &str, f: impl FnOnce(&mut RawOptions)) -> String {
    let e = Options::validate(&with(f)).expect_err(option);
    let Error::InvalidOptions { option: named, .. } = &e else {
        panic!("expected invalid-options for `{option}`, got {e:?}")
    };
    assert_eq!(named, option);
    assert_eq!(e.code(), "invalid-options");
    let msg = e.to_string();
    assert!(msg.contains(&format!("`{option}`")), "{msg}");
    msg
}

fn s(v: &str) -> Option<String> {
    Some(v.into())
}

#[test]
fn defaults_follow_the_design() {
    let o = ok(|_| {});
    assert_eq!(
        (o.scope.as_str(), o.endpoint.as_str()),
        ("cart-42", "/api/charges")
    );
    assert_eq!(o.method, "POST");
    assert!(o.headers.is_empty());
    assert_eq!(o.header_name, "Idempotency-Key");
    assert_eq!(o.header_format, HeaderFormat::Plain);
    assert_eq!((o.ttl_seconds, o.ttl_ms()), (86_400, 86_400_000.0));
    assert_eq!((o.timeout_ms, o.max_retries), (10_000, 5));
    assert_eq!(
        (o.backoff_base_ms, o.backoff_max_ms, o.deadline_ms),
        (250, 10_000, 60_000)
    );
    assert_eq!(o.storage, StorageKind::Local);
    assert_eq!(
        (o.namespace.as_str(), o.credentials.as_str()),
        ("idemkey", "same-origin")
    );
    let policy = RetryPolicy {
        max_retries: 5,
        base_ms: 250,
        max_ms: 10_000,
        deadline_ms: 60_000,
    };
    assert_eq!(o.retry_policy(), policy);
}

#[test]
fn every_option_accepts_a_good_value() {
    let o = ok(|r| {
        r.method = s("patch");
        r.headers = vec![
            ("Authorization".into(), "Bearer x".into()),
            ("X-Trace".into(), "".into()),
        ];
        r.header_name = s("PayPal-Request-Id");
        r.header_format = s("sf-string");
        (r.ttl_seconds, r.timeout_ms, r.max_retries) = (Some(60.0), Some(1.0), Some(0.0));
        (r.backoff_base_ms, r.backoff_max_ms, r.deadline_ms) = (Some(0.0), Some(0.0), Some(5000.0));
        (r.storage, r.namespace, r.credentials) = (s("memory"), s("shop"), s("include"));
    });
    assert_eq!(o.method, "PATCH");
    assert_eq!(o.headers.len(), 2);
    assert_eq!(o.header_name, "PayPal-Request-Id");
    assert_eq!(o.header_format, HeaderFormat::SfString);
    assert_eq!((o.ttl_seconds, o.timeout_ms, o.max_retries), (60, 1, 0));
    assert_eq!(
        (o.backoff_base_ms, o.backoff_max_ms, o.deadline_ms),
        (0, 0, 5000)
    );
    assert_eq!(o.storage, StorageKind::Memory);
    assert_eq!(
        (o.namespace.as_str(), o.credentials.as_str()),
        ("shop", "include")
    );
    for m in ["POST", "put", "Delete", "pAtCh"] {
        assert_eq!(ok(|r| r.method = s(m)).method, m.to_ascii_uppercase());
    }
}

#[test]
fn scope() {
    assert!(fails("scope", |r| r.scope = None).ends_with("is required"));
    fails("scope", |r| r.scope = s(""));
    fails("scope", |r| r.scope = Some("x".repeat(201)));
    ok(|r| r.scope = Some("x".repeat(200)));
    ok(|r| r.scope = s("x"));
    // Counted like JS `length`: 100 emoji are 200 UTF-16 units, 101 are too many.
    ok(|r| r.scope = Some("😀".repeat(100)));
    fails("scope", |r| r.scope = Some("😀".repeat(101)));
}

#[test]
fn endpoint() {
    assert!(fails("endpoint", |r| r.endpoint = None).ends_with("is required"));
    fails("endpoint", |r| r.endpoint = s(""));
    fails("endpoint", |r| r.endpoint = s("  "));
    fails("endpoint", |r| r.endpoint = s("/a\r\nX: y"));
    ok(|r| r.endpoint = s("https://pay.example/c"));
}

#[test]
fn method() {
    for m in ["GET", "HEAD", "", "POST ", "OPTIONS", "CONNECT"] {
        fails("method", |r| r.method = s(m));
    }
}

type Setter = fn(&mut RawOptions, f64);

#[test]
fn numbers_fed_wrong() {
    let setters: [(&str, Setter); 6] = [
        ("ttlSeconds", |r, v| r.ttl_seconds = Some(v)),
        ("timeoutMs", |r, v| r.timeout_ms = Some(v)),
        ("maxRetries", |r, v| r.max_retries = Some(v)),
        ("backoff.baseMs", |r, v| r.backoff_base_ms = Some(v)),
        ("backoff.maxMs", |r, v| r.backoff_max_ms = Some(v)),
        ("deadlineMs", |r, v| r.deadline_ms = Some(v)),
    ];
    let wrong = [
        (-1.0, "must not be negative"),
        (-0.5, "must not be negative"),
        (1.5, "must be an integer"),
        (0.1, "must be an integer"),
        (f64::NAN, "must be a finite number"),
        (f64::INFINITY, "must be a finite number"),
        (f64::NEG_INFINITY, "must be a finite number"),
        (1e12, "must be an integer from"),
    ];
    for (name, set) in setters {
        for (v, why) in wrong {
            let msg = fails(name, |r| {
                // Keep the baseMs <= maxMs rule out of the way.
                r.backoff_max_ms = Some(3_600_000.0);
                set(r, v);
            });
            assert!(msg.contains(why), "{name}={v}: {msg}");
        }
    }
}

#[test]
fn number_ranges() {
    fails("ttlSeconds", |r| r.ttl_seconds = Some(0.0));
    ok(|r| r.ttl_seconds = Some(31_536_000.0));
    fails("ttlSeconds", |r| r.ttl_seconds = Some(31_536_001.0));
    fails("timeoutMs", |r| r.timeout_ms = Some(0.0));
    fails("timeoutMs", |r| r.timeout_ms = Some(600_001.0));
    ok(|r| r.max_retries = Some(100.0));
    fails("maxRetries", |r| r.max_retries = Some(101.0));
    fails("deadlineMs", |r| r.deadline_ms = Some(0.0));
    fails("backoff.maxMs", |r| r.backoff_max_ms = Some(3_600_001.0));
    // -0 is zero, not negative.
    assert_eq!(ok(|r| r.max_retries = Some(-0.0)).max_retries, 0);
}

#[test]
fn base_above_max() {
    let msg = fails("backoff.baseMs", |r| {
        (r.backoff_base_ms, r.backoff_max_ms) = (Some(2000.0), Some(1000.0));
    });
    assert!(msg.contains("backoff.maxMs"), "{msg}");
    // Against the default maxMs too.
    fails("backoff.baseMs", |r| r.backoff_base_ms = Some(20_000.0));
    ok(|r| (r.backoff_base_ms, r.backoff_max_ms) = (Some(1000.0), Some(1000.0)));
}

#[test]
fn storage() {
    for v in ["Local", "indexeddb", "", "cookie"] {
        fails("storage", |r| r.storage = s(v));
    }
    let kinds = [
        ("local", StorageKind::Local),
        ("session", StorageKind::Session),
        ("memory", StorageKind::Memory),
    ];
    for (v, k) in kinds {
        assert_eq!(ok(|r| r.storage = s(v)).storage, k);
        assert_eq!((StorageKind::parse(v), k.as_str()), (Some(k), v));
    }
}

#[test]
fn header_format() {
    for v in ["sf", "SF-STRING", "quoted", ""] {
        fails("headerFormat", |r| r.header_format = s(v));
    }
    for f in [HeaderFormat::Plain, HeaderFormat::SfString] {
        assert_eq!(HeaderFormat::parse(f.as_str()), Some(f));
    }
}

#[test]
fn header_name() {
    for n in [
        "",
        "Idempotency Key",
        "Key:",
        "Key\r\nX",
        "Ключ",
        "(key)",
        "a/b",
        "k\"",
        "a@b",
    ] {
        fails("headerName", |r| r.header_name = s(n));
    }
    for n in ["X-Request-Id", "idempotency-key", "a!#$%&'*+-.^_`|~9"] {
        ok(|r| r.header_name = s(n));
    }
}

#[test]
fn headers() {
    let h = |n: &str, v: &str| fails("headers", |r| r.headers = vec![(n.into(), v.into())]);
    h("Bad Name", "v");
    h("", "v");
    h("X-A", "a\r\nX-Injected: 1");
    h("X-A", "a\nb");
    h("X-A", "a\rb");
    h("X-A", "a\0b");
    // The key's own header cannot be overridden, in any case.
    h("idempotency-key", "mine");
    fails("headers", |r| {
        r.header_name = s("X-Key");
        r.headers = vec![("x-key".into(), "v".into())];
    });
    ok(|r| r.headers = vec![("Idempotency-Key-Extra".into(), "v".into())]);
}

#[test]
fn namespace() {
    for n in [String::new(), "a:b".into(), "x".repeat(65)] {
        fails("namespace", |r| r.namespace = Some(n));
    }
    ok(|r| r.namespace = Some("x".repeat(64)));
}

#[test]
fn namespace_length_counts_utf16_units() {
    // 64 UTF-16 units: 32 astral characters are 64 units, 33 are too many.
    let astral = |n| "\u{1F600}".repeat(n);
    for n in [":".into(), astral(33)] {
        fails("namespace", |r| r.namespace = Some(n));
    }
    for n in ["idemkey".into(), astral(32), "shop-2.v".into()] {
        ok(|r| r.namespace = Some(n));
    }
}

#[test]
fn credentials() {
    for c in ["", "Include", "same_origin", "all"] {
        fails("credentials", |r| r.credentials = s(c));
    }
    for c in ["omit", "same-origin", "include"] {
        assert_eq!(ok(|r| r.credentials = s(c)).credentials, c);
    }
}

#[test]
fn tokens() {
    assert!(is_token("Idempotency-Key"));
    for t in ["", "a b", "a\tb", "é"] {
        assert!(!is_token(t), "{t:?}");
    }
}

#[test]
fn utf16_len_counts_as_js_length_does() {
    for t in [
        "",
        "a",
        "é",
        "€",
        "𝄞",
        "a𝄞é€z",
        "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}",
    ] {
        assert_eq!(utf16_len(t), t.encode_utf16().count(), "{t:?}");
    }
}

#[test]
fn is_token_takes_exactly_the_rfc9110_tchars() {
    const TCHAR: &[u8] = b"!#$%&'*+-.^_`|~";
    for b in 0..=255u8 {
        let tchar = b.is_ascii_alphanumeric() || TCHAR.contains(&b);
        let s = [b'a', b, b'z'];
        assert_eq!(
            is_token(&String::from_utf8_lossy(&s)),
            tchar,
            "byte {b:#04x}"
        );
    }
    assert!(!is_token(""));
}

/// The reasons that list a range or the allowed values, word for word: they are fixed texts
/// made from the same literals as the checks, and a page author reads them.
#[test]
fn range_and_choice_reasons_word_for_word() {
    /// The option, how to set it wrong, and the reason word for word.
    type Case = (&'static str, fn(&mut RawOptions), &'static str);
    let cases: [Case; 10] = [
        (
            "ttlSeconds",
            |r| r.ttl_seconds = Some(0.0),
            "must be an integer from 1 to 31536000",
        ),
        (
            "timeoutMs",
            |r| r.timeout_ms = Some(0.0),
            "must be an integer from 1 to 600000",
        ),
        (
            "maxRetries",
            |r| r.max_retries = Some(101.0),
            "must be an integer from 0 to 100",
        ),
        (
            "backoff.baseMs",
            |r| r.backoff_base_ms = Some(4e6),
            "must be an integer from 0 to 3600000",
        ),
        (
            "backoff.maxMs",
            |r| r.backoff_max_ms = Some(4e6),
            "must be an integer from 0 to 3600000",
        ),
        (
            "deadlineMs",
            |r| r.deadline_ms = Some(0.0),
            "must be an integer from 1 to 86400000",
        ),
        (
            "method",
            |r| r.method = s("GET"),
            r#"must be one of: "POST" "PUT" "PATCH" "DELETE""#,
        ),
        (
            "headerFormat",
            |r| r.header_format = s("x"),
            r#"must be one of: "plain" "sf-string""#,
        ),
        (
            "storage",
            |r| r.storage = s("disk"),
            r#"must be one of: "local" "session" "memory""#,
        ),
        (
            "credentials",
            |r| r.credentials = s("x"),
            r#"must be one of: "same-origin" "omit" "include""#,
        ),
    ];
    for (option, set, why) in cases {
        let msg = fails(option, set);
        assert_eq!(msg, format!("invalid option `{option}`: {why}"));
    }
}
