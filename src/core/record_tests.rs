use super::*;
use crate::core::json::Json;
use crate::error::Error;

const KEY: &str = "8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f";
const NOW: f64 = 1_700_000_000_000.0;

fn full() -> Record {
    let mut r = Record::new(KEY, "cart \"42\" ü", NOW, 86_400_000.0);
    r.fingerprint = Some("f1:0123456789abcdef".into());
    r.state = State::Succeeded;
    r.attempts = 3;
    r.updated_at = NOW + 5.0;
    r.response = Some(StoredResponse {
        status: 201,
        body: "{\"id\":\"ch_1\",\"note\":\"a\\nb\"}\n".into(),
        replayed: true,
    });
    r
}

/// `full()` encoded, with `field` replaced by `value` (or removed when `value` is None).
fn with(field: &str, value: Option<&str>) -> String {
    let Json::Obj(mut m) = Json::parse(&full().encode()).unwrap() else {
        unreachable!()
    };
    match value {
        Some(v) => m.iter_mut().find(|(k, _)| k == field).unwrap().1 = Json::parse(v).unwrap(),
        None => m.retain(|(k, _)| k != field),
    }
    let mut s = String::new();
    Json::Obj(m).write(&mut s);
    s
}

fn reason(text: &str) -> String {
    match Record::decode(text) {
        Err(Error::CorruptRecord(r)) => r,
        other => panic!("expected CorruptRecord for {text:?}, got {other:?}"),
    }
}

#[test]
fn new_record_is_fresh() {
    let r = Record::new(KEY, "s", NOW, 1000.0);
    assert_eq!(r.version, RECORD_VERSION);
    assert_eq!(r.state, State::Fresh);
    assert_eq!(r.attempts, 0);
    assert_eq!(r.fingerprint, None);
    assert_eq!(r.response, None);
    assert_eq!(
        (r.created_at, r.updated_at, r.expires_at),
        (NOW, NOW, NOW + 1000.0)
    );
    assert!(!r.is_expired(NOW + 999.0));
    assert!(r.is_expired(NOW + 1000.0));
}

#[test]
fn round_trip() {
    for r in [full(), Record::new(KEY, "s", NOW, 1.0)] {
        let text = r.encode();
        assert_eq!(Record::decode(&text).unwrap(), r);
    }
    let mut pending = full();
    pending.state = State::Pending;
    pending.response = None;
    assert_eq!(Record::decode(&pending.encode()).unwrap(), pending);
}

#[test]
fn encoding_is_versioned_json() {
    let text = Record::new(KEY, "s", NOW, 1000.0).encode();
    assert_eq!(
        text,
        r#"{"v":1,"rev":0,"key":"8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f","scope":"s","fp":null,"state":"fresh","attempts":0,"createdAt":1700000000000,"expiresAt":1700000001000,"updatedAt":1700000000000,"response":null}"#
    );
}

#[test]
fn field_order_whitespace_and_unknown_fields_are_tolerated() {
    let r = Record::decode(
        r#" { "response" : null, "state":"fresh", "scope":"s", "extra":[1], "key":"8C1A9D5E-0F4B-4C2A-9E3D-7B6A5C4D3E2F",
              "v":1, "fp":null, "attempts":0, "updatedAt":1, "expiresAt":2, "createdAt":1 } "#,
    )
    .unwrap();
    assert_eq!(r.scope, "s");
    assert_eq!(r.expires_at, 2.0);
}

#[test]
fn rev_is_optional_and_round_trips() {
    let mut r = full();
    r.rev = 7;
    assert!(r.encode().starts_with(r#"{"v":1,"rev":7,"key":"#));
    assert_eq!(Record::decode(&r.encode()).unwrap().rev, 7);
    // A record an older release wrote has no `rev`: it reads as 0, everything else intact.
    let old = Record::decode(&with("rev", None)).unwrap();
    assert_eq!(old.rev, 0);
    assert_eq!(old.key, KEY);
    assert_eq!(old.state, State::Succeeded);
    assert_eq!(reason(&with("rev", Some("-1"))), "field `rev`: wrong type");
    assert_eq!(
        reason(&with("rev", Some("\"3\""))),
        "field `rev`: wrong type"
    );
    assert_eq!(reason(&with("rev", Some("1.5"))), "field `rev`: wrong type");
    assert_eq!(
        reason(&with("rev", Some("9007199254740992"))),
        "field `rev`: wrong type"
    );
}

#[test]
fn an_earlier_releases_submitted_at_is_read_past_and_no_longer_written() {
    assert!(!full().encode().contains("submittedAt"));
    for old in ["1700000000002", "0", "\"x\"", "null"] {
        let text = full()
            .encode()
            .replacen("{", &format!("{{\"submittedAt\":{old},"), 1);
        assert_eq!(Record::decode(&text).unwrap(), full(), "{old}");
    }
}

#[test]
fn a_record_from_release_0_1_0_reads() {
    let text = r#"{"v":1,"key":"8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f","scope":"cart-42","fp":"f1:0123456789abcdef","state":"pending","attempts":2,"createdAt":1700000000000,"expiresAt":1700086400000,"updatedAt":1700000000005,"response":null}"#;
    let r = Record::decode(text).unwrap();
    assert_eq!((r.rev, r.state, r.attempts), (0, State::Pending, 2));
    assert_eq!(r.fingerprint.as_deref(), Some("f1:0123456789abcdef"));
}

#[test]
fn versioning() {
    assert_eq!(reason(&with("v", None)), "missing field `v`");
    assert_eq!(reason(&with("v", Some("2"))), "unsupported version");
    assert_eq!(reason(&with("v", Some("0"))), "unsupported version");
    assert_eq!(reason(&with("v", Some("\"1\""))), "unsupported version");
    assert_eq!(reason(&with("v", Some("1.5"))), "unsupported version");
}

/// Numbers are told apart by their value, not by how they are written: records written by
/// earlier versions (which wrote them with the browser's `JSON.stringify`) or edited by hand
/// may spell a whole number `1.0` or `1.7e12`.
#[test]
fn numbers_are_read_by_their_value() {
    assert_eq!(Record::decode(&with("v", Some("1.0"))).unwrap().version, 1);
    let r = Record::decode(&with("createdAt", Some("1.7e12"))).unwrap();
    assert_eq!(r.created_at, 1_700_000_000_000.0);
    assert_eq!(
        Record::decode(&with("attempts", Some("3.0")))
            .unwrap()
            .attempts,
        3
    );
}

#[test]
fn missing_fields() {
    for f in [
        "key",
        "scope",
        "fp",
        "state",
        "attempts",
        "createdAt",
        "expiresAt",
        "updatedAt",
        "response",
    ] {
        let mut want = String::from("missing field `");
        want.push_str(f);
        want.push('`');
        assert_eq!(reason(&with(f, None)), want);
    }
    let no_body = with("response", Some(r#"{"status":201,"replayed":false}"#));
    assert_eq!(reason(&no_body), "missing field `body`");
}

#[test]
fn wrong_types() {
    let cases = [
        ("key", "1"),
        ("scope", "null"),
        ("fp", "3"),
        ("fp", "\"\""),
        ("state", "1"),
        ("attempts", "\"3\""),
        ("attempts", "-1"),
        ("attempts", "1.5"),
        ("attempts", "4294967296"),
        ("createdAt", "\"now\""),
        ("createdAt", "-5"),
        ("createdAt", "1.5e-3"),
        ("updatedAt", "9007199254740992"),
        ("response", "\"ok\""),
        ("response", "[]"),
    ];
    for (f, v) in cases {
        let r = reason(&with(f, Some(v)));
        assert!(
            r.starts_with("field `") && r.ends_with("`: wrong type"),
            "{f}={v}: {r}"
        );
        assert!(r.contains(f), "{f}={v}: {r}");
    }
    for (v, f) in [
        (r#"{"status":"201","body":"","replayed":false}"#, "status"),
        (r#"{"status":600,"body":"","replayed":false}"#, "status"),
        (r#"{"status":201,"body":1,"replayed":false}"#, "body"),
        (r#"{"status":201,"body":"","replayed":"true"}"#, "replayed"),
    ] {
        let r = reason(&with("response", Some(v)));
        assert!(r.contains(f) && r.ends_with("wrong type"), "{v}: {r}");
    }
    assert_eq!(
        reason(&with(
            "response",
            Some(r#"{"status":99,"body":"","replayed":false}"#)
        )),
        "field `status`: out of range"
    );
}

#[test]
fn bad_values() {
    assert_eq!(
        reason(&with("state", Some("\"done\""))),
        "field `state`: unknown state"
    );
    assert_eq!(
        reason(&with("state", Some("\"Succeeded\""))),
        "field `state`: unknown state"
    );
    assert_eq!(reason(&with("scope", Some("\"\""))), "field `scope`: empty");
    assert_eq!(
        reason(&with("fp", Some("null"))),
        "field `fp`: missing for a sent attempt"
    );
    assert_eq!(
        reason(&with("expiresAt", Some("1"))),
        "field `expiresAt`: before createdAt"
    );
}

#[test]
fn key_must_be_uuid_shaped() {
    for k in [
        "",
        "abc",
        "8c1a9d5e0f4b4c2a9e3d7b6a5c4d3e2f",
        "8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2",
        "8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f0",
        "8c1a9d5e-0f4b-4c2a-9e3d_7b6a5c4d3e2f",
        "gc1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f",
        "{8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f}",
    ] {
        let mut v = String::new();
        write_str(k, &mut v);
        assert_eq!(
            reason(&with("key", Some(&v))),
            "field `key`: not a UUID",
            "{k:?}"
        );
    }
    assert!(is_uuid(KEY));
    assert!(is_uuid("00000000-0000-0000-0000-000000000000"));
}

#[test]
fn garbage_and_truncated_text() {
    let text = full().encode();
    for cut in [0, 1, 10, text.len() / 2, text.len() - 1] {
        let r = reason(&text[..cut]);
        assert!(r.starts_with("not JSON: "), "cut {cut}: {r}");
    }
    assert_eq!(reason("garbage"), "not JSON: unexpected character");
    assert_eq!(reason("nothing"), "not JSON: invalid literal");
    assert_eq!(reason("{\"v\":1"), "not JSON: unexpected end of input");
    assert_eq!(reason("[1,2]"), "not a JSON object");
    assert_eq!(reason("null"), "not a JSON object");
    assert_eq!(reason("\"x\""), "not a JSON object");
    assert_eq!(reason("{}"), "missing field `v`");
    let mut trailing = text.clone();
    trailing.push('}');
    assert_eq!(
        reason(&trailing),
        "not JSON: trailing characters after the JSON value"
    );
}

#[test]
fn every_decode_error_is_corrupt_record() {
    let e = Record::decode("x").unwrap_err();
    assert_eq!(e.code(), "corrupt-record");
    assert!(e
        .to_string()
        .starts_with("stored record unreadable: not JSON"));
}
