//! The fault modes that answer before any work, against the real binary:
//! `respond` (exactly the scheduled status, `Retry-After`, body and
//! `Content-Type`) and `drop-before-commit` (no response at all). For each:
//! the answer is as scheduled, nothing is stored, the provider is not called,
//! the next request proceeds normally, and `GET /api/faults` logs the units
//! taken with the request's key and fingerprint.

mod common;

use common::*;
use serde_json::{json, Value};

fn start(b: Backend) -> Server {
    Server::start_with(b, &["--faults", "--provider-latency-ms", "10"])
}

/// Nothing of this request exists: no charge, no key row, no provider call.
fn assert_nothing_stored(s: &Server, c: &str, k: &str) {
    assert_eq!(ledger(s.addr, c)["count"], 0);
    assert_eq!(key_state(s.db(), c, k), None, "no key row");
    assert_eq!(get_json(s.addr, "/api/provider", c)["calls"], 0);
}

fn respond_answers_exactly_as_scheduled_and_stores_nothing(b: Backend) {
    let s = start(b);
    let (c, k) = (uid("cust"), uid("key"));
    let q = fault(
        s.addr,
        &c,
        r#"{"mode":"respond","count":2,"status":429,"retry_after":"7","body":"slow down","content_type":"text/plain"}"#,
    );
    assert_eq!(
        q["scheduled"][0],
        json!({"mode": "respond", "remaining": 2, "delay_ms": 1000, "status": 429,
               "retry_after": "7", "body": "slow down", "content_type": "text/plain"})
    );
    let date = "Wed, 21 Oct 2015 07:28:00 GMT";
    fault(
        s.addr,
        &c,
        &json!({"mode": "respond", "status": 503, "retry_after": date,
                "body": "{\"b\":1,\"a\":[2]}", "content_type": "application/json"})
        .to_string(),
    );
    fault(s.addr, &c, r#"{"mode":"respond","status":204}"#);
    for _ in 0..2 {
        let r = charge(s.addr, &c, &k, BODY);
        assert_eq!(r.status, 429);
        assert_eq!(r.header("retry-after"), Some("7"));
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.body, b"slow down");
        assert!(!r.replayed());
        assert_nothing_stored(&s, &c, &k);
    }
    let r = charge(s.addr, &c, &k, BODY);
    assert_eq!(r.status, 503);
    assert_eq!(
        r.header("retry-after"),
        Some(date),
        "an HTTP date, verbatim"
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, br#"{"b":1,"a":[2]}"#, "the body byte for byte");
    let r = charge(s.addr, &c, &k, BODY);
    assert_eq!(r.status, 204);
    assert!(r.body.is_empty());
    assert_eq!(
        r.header("content-type"),
        None,
        "no Content-Type unless scheduled"
    );
    assert_eq!(r.header("retry-after"), None);
    assert_nothing_stored(&s, &c, &k);

    let f = get_json(s.addr, "/api/faults", &c);
    assert_eq!(f["scheduled"], json!([]));
    let taken = f["taken"].as_array().unwrap();
    assert_eq!(taken.len(), 4, "one unit per request: {f}");
    for t in taken {
        assert_eq!((&t["mode"], &t["key"]), (&json!("respond"), &json!(k)));
        assert_eq!(t["fingerprint"], taken[0]["fingerprint"]);
        assert!(t["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("hmac-sha256:"));
    }
    // Nothing was stored, so the key is still free: even another payload is a
    // first request.
    let ok = charge(s.addr, &c, &k, r#"{"amount":1,"currency":"gbp"}"#);
    assert_eq!(ok.status, 201);
    assert!(!ok.replayed());
    assert_eq!(ok.json()["key"], json!(k));
    assert_eq!(ledger(s.addr, &c)["count"], 1);
    assert_eq!(
        get_json(s.addr, "/api/faults", &c)["taken"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

fn drop_before_commit_closes_the_connection_with_nothing_stored(b: Backend) {
    let s = start(b);
    let (c, k) = (uid("cust"), uid("key"));
    let q = fault(s.addr, &c, r#"{"mode":"drop-before-commit","count":2}"#);
    assert_eq!(q["scheduled"][0]["mode"], "drop-before-commit");
    for _ in 0..2 {
        let dropped = try_charge(s.addr, &c, &k, BODY).unwrap();
        assert!(dropped.is_none(), "expected no response, got {dropped:?}");
        assert_nothing_stored(&s, &c, &k);
    }
    let f = get_json(s.addr, "/api/faults", &c);
    assert_eq!(f["scheduled"], json!([]));
    let keys: Vec<&Value> = f["taken"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["key"])
        .collect();
    assert_eq!(keys, [&json!(k), &json!(k)]);
    let ok = charge(s.addr, &c, &k, r#"{"amount":1,"currency":"gbp"}"#);
    assert_eq!(ok.status, 201);
    assert!(!ok.replayed(), "the dropped requests did no work");
    assert_eq!(ledger(s.addr, &c)["count"], 1);
}

fn replays_do_not_take_a_respond_unit(b: Backend) {
    let s = start(b);
    let (c, k) = (uid("cust"), uid("key"));
    assert_eq!(charge(s.addr, &c, &k, BODY).status, 201);
    fault(s.addr, &c, r#"{"mode":"respond","status":500}"#);
    assert!(charge(s.addr, &c, &k, BODY).replayed());
    assert_eq!(
        get_json(s.addr, "/api/faults", &c)["scheduled"][0]["remaining"],
        1
    );
    let r = charge(s.addr, &c, &uid("key"), BODY);
    assert_eq!((r.status, r.body.len()), (500, 0));
    assert_eq!(ledger(s.addr, &c)["count"], 1);
}

fn the_naive_endpoint_takes_them_too(b: Backend) {
    let s = start(b);
    let c = uid("cust");
    let post = || {
        try_request(
            s.addr,
            "POST",
            "/api/naive/charges",
            &[("Content-Type", "application/json"), ("X-Customer-Id", &c)],
            BODY.as_bytes(),
        )
        .unwrap()
    };
    fault(
        s.addr,
        &c,
        r#"{"mode":"respond","status":418,"body":"teapot"}"#,
    );
    fault(s.addr, &c, r#"{"mode":"drop-before-commit"}"#);
    let r = post().expect("a response");
    assert_eq!((r.status, r.body.as_slice()), (418, b"teapot".as_slice()));
    assert!(post().is_none());
    assert_eq!(ledger(s.addr, &c)["count"], 0);
    let taken = &get_json(s.addr, "/api/faults", &c)["taken"];
    assert_eq!(taken[0]["key"], Value::Null);
    assert_eq!(post().expect("a response").status, 201);
}

fn bad_respond_requests_are_400_naming_the_field(b: Backend) {
    let s = start(b);
    let c = uid("cust");
    let huge = "x".repeat(16 * 1024 + 1);
    for (bad, field) in [
        json!({"mode": "respond"}),
        json!({"mode": "respond", "status": 600}),
        json!({"mode": "respond", "status": 100}),
        json!({"mode": "respond", "status": 503.5}),
        json!({"mode": "respond", "status": 503, "retry_after": "1\u{1}"}),
        json!({"mode": "respond", "status": 503, "retry_after": 1}),
        json!({"mode": "respond", "status": 503, "content_type": "x".repeat(257)}),
        json!({"mode": "respond", "status": 503, "body": huge}),
        json!({"mode": "respond", "status": 503, "body": {"a": 1}}),
        json!({"mode": "respond", "status": 204, "body": "x"}),
        json!({"mode": "drop-before-commit", "retry_after": "1"}),
    ]
    .into_iter()
    .zip([
        "status",
        "status",
        "status",
        "status",
        "retry_after",
        "retry_after",
        "content_type",
        "body",
        "body",
        "body",
        "retry_after",
    ]) {
        let r = request(
            s.addr,
            "POST",
            "/api/faults",
            &[("Content-Type", "application/json"), ("X-Customer-Id", &c)],
            bad.to_string().as_bytes(),
        );
        let p = r.assert_problem(400);
        let detail = p["detail"].as_str().unwrap();
        assert!(detail.contains(&format!("`{field}`")), "{bad}: {detail}");
    }
    assert_eq!(get_json(s.addr, "/api/faults", &c)["scheduled"], json!([]));
}

both_stores!(
    respond_answers_exactly_as_scheduled_and_stores_nothing,
    drop_before_commit_closes_the_connection_with_nothing_stored,
    replays_do_not_take_a_respond_unit,
    the_naive_endpoint_takes_them_too,
    bad_respond_requests_are_400_naming_the_field,
);
