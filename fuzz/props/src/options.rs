//! `Checkout.open` option validation on arbitrary raw options.
//!
//! Properties: accepted options keep every documented rule and default, and validate again
//! to themselves; a refusal is `invalid-options` naming one of the options by its JS name.

use arbitrary::{Result, Unstructured};
use idemkey::core::options::{is_token, Options, RawOptions};
use idemkey::error::Error;

/// Every option's JS name.
const NAMES: &[&str] = &[
    "scope",
    "endpoint",
    "method",
    "headers",
    "headerName",
    "headerFormat",
    "ttlSeconds",
    "timeoutMs",
    "maxRetries",
    "backoff.baseMs",
    "backoff.maxMs",
    "deadlineMs",
    "storage",
    "namespace",
    "credentials",
];

/// Validates raw options built from `data`.
pub fn check(data: &[u8]) {
    let Ok(raw) = raw(&mut Unstructured::new(data)) else {
        return;
    };
    match Options::validate(&raw) {
        Ok(o) => {
            assert_rules(&o, &raw);
            assert_eq!(
                Options::validate(&as_raw(&o)).as_ref(),
                Ok(&o),
                "not idempotent"
            );
        }
        Err(e @ Error::InvalidOptions { .. }) => {
            let Error::InvalidOptions { option, reason } = &e else {
                unreachable!()
            };
            assert!(
                NAMES.contains(&option.as_str()),
                "unknown option name {option:?}"
            );
            assert!(!reason.is_empty());
            assert!(e.to_string().contains(&format!("`{option}`")));
            assert_eq!(e.code(), "invalid-options");
        }
        Err(e) => panic!("validate gave {e:?} for {raw:?}"),
    }
}

fn assert_rules(o: &Options, raw: &RawOptions) {
    let n = o.scope.encode_utf16().count();
    assert!((1..=200).contains(&n), "scope length {n}");
    assert!(!o.endpoint.trim().is_empty() && !o.endpoint.contains(['\r', '\n', '\0']));
    assert!(["POST", "PUT", "PATCH", "DELETE"].contains(&o.method.as_str()));
    assert!(is_token(&o.header_name));
    for (k, v) in &o.headers {
        assert!(is_token(k) && !v.contains(['\r', '\n', '\0']));
        assert!(
            !k.eq_ignore_ascii_case(&o.header_name),
            "headers set the key header"
        );
    }
    assert!((1..=31_536_000).contains(&o.ttl_seconds));
    assert!((1..=600_000).contains(&o.timeout_ms));
    assert!(o.max_retries <= 100);
    assert!(o.backoff_base_ms <= o.backoff_max_ms && o.backoff_max_ms <= 3_600_000);
    assert!((1..=86_400_000).contains(&o.deadline_ms));
    let n = o.namespace.encode_utf16().count();
    assert!(
        (1..=64).contains(&n) && !o.namespace.contains(':'),
        "namespace {:?}",
        o.namespace
    );
    assert!(["omit", "same-origin", "include"].contains(&o.credentials.as_str()));
    let dflt = |given: bool, got: u32, want: u32| assert!(given || got == want);
    dflt(raw.ttl_seconds.is_some(), o.ttl_seconds, 86_400);
    dflt(raw.timeout_ms.is_some(), o.timeout_ms, 10_000);
    dflt(raw.max_retries.is_some(), o.max_retries, 5);
    dflt(raw.backoff_base_ms.is_some(), o.backoff_base_ms, 250);
    dflt(raw.backoff_max_ms.is_some(), o.backoff_max_ms, 10_000);
    dflt(raw.deadline_ms.is_some(), o.deadline_ms, 60_000);
    assert!(raw.namespace.is_some() || o.namespace == "idemkey");
    assert!(raw.method.is_some() || o.method == "POST");
    assert!(raw.header_name.is_some() || o.header_name == "Idempotency-Key");
    assert!(raw.credentials.is_some() || o.credentials == "same-origin");
}

/// The raw options that say exactly what `o` holds.
fn as_raw(o: &Options) -> RawOptions {
    RawOptions {
        scope: Some(o.scope.clone()),
        endpoint: Some(o.endpoint.clone()),
        method: Some(o.method.clone()),
        headers: o.headers.clone(),
        header_name: Some(o.header_name.clone()),
        header_format: Some(o.header_format.as_str().into()),
        ttl_seconds: Some(o.ttl_seconds.into()),
        timeout_ms: Some(o.timeout_ms.into()),
        max_retries: Some(o.max_retries.into()),
        backoff_base_ms: Some(o.backoff_base_ms.into()),
        backoff_max_ms: Some(o.backoff_max_ms.into()),
        deadline_ms: Some(o.deadline_ms.into()),
        storage: Some(o.storage.as_str().into()),
        namespace: Some(o.namespace.clone()),
        credentials: Some(o.credentials.clone()),
    }
}

/// A string: absent, one of `known` (valid and nearly valid spellings), or arbitrary.
fn text(u: &mut Unstructured, known: &[&str]) -> Result<Option<String>> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => None,
        1 | 2 => Some((*u.choose(known)?).into()),
        _ => Some(u.arbitrary()?),
    })
}

/// A number: absent, an edge of some option's range, or arbitrary (NaN, infinities too).
fn number(u: &mut Unstructured) -> Result<Option<f64>> {
    const EDGES: &[f64] = &[
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        20.0,
        100.0,
        101.0,
        250.0,
        10_000.0,
        600_000.0,
        600_001.0,
        3_600_000.0,
        3_600_001.0,
        31_536_000.0,
        31_536_001.0,
        86_400_000.0,
        86_400_001.0,
        4_294_967_296.0,
        1e300,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::EPSILON,
    ];
    Ok(match u.int_in_range(0..=3u8)? {
        0 => None,
        1 | 2 => Some(*u.choose(EDGES)?),
        _ => Some(u.arbitrary()?),
    })
}

fn raw(u: &mut Unstructured) -> Result<RawOptions> {
    let mut headers = Vec::new();
    for _ in 0..u.int_in_range(0..=3u8)? {
        let name = text(
            u,
            &[
                "X-Customer-Id",
                "Idempotency-Key",
                "idempotency-key",
                "a b",
                "",
            ],
        )?;
        let value = text(u, &["1", "a\r\nb", "x\0", ""])?;
        headers.push((name.unwrap_or_default(), value.unwrap_or_default()));
    }
    Ok(RawOptions {
        scope: text(u, &["cart-42", "", "😀", "\u{0}"])?,
        endpoint: text(u, &["/api/charges", " ", "", "/a\nb", "https://x/y"])?,
        method: text(u, &["post", "PUT", "patch", "Delete", "GET", ""])?,
        headers,
        header_name: text(
            u,
            &[
                "Idempotency-Key",
                "PayPal-Request-Id",
                "a:b",
                "",
                "X-Customer-Id",
            ],
        )?,
        header_format: text(u, &["plain", "sf-string", "Plain", ""])?,
        ttl_seconds: number(u)?,
        timeout_ms: number(u)?,
        max_retries: number(u)?,
        backoff_base_ms: number(u)?,
        backoff_max_ms: number(u)?,
        deadline_ms: number(u)?,
        storage: text(u, &["local", "session", "memory", "indexeddb", ""])?,
        namespace: text(u, &["idemkey", "a:b", "", "shop"])?,
        credentials: text(u, &["omit", "same-origin", "include", "none"])?,
    })
}
