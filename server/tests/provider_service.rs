//! The provider stand-in as its own service: its HTTP interface (the
//! `Idempotency-Key` it deduplicates on, refusals of bad calls) and an
//! instance that uses it through `--provider-url`.

mod common;

use common::*;

fn pay(p: &ProviderProc, key: Option<&str>, body: &str) -> Resp {
    let mut h = vec![("Content-Type", "application/json"), ("X-Customer-Id", "c")];
    if let Some(k) = key {
        h.push(("Idempotency-Key", k));
    }
    request(p.addr, "POST", "/v1/payments", &h, body.as_bytes())
}

#[test]
fn the_service_pays_once_per_key_and_operation_and_refuses_bad_calls() {
    let p = ProviderProc::start(5);
    assert_eq!(
        request(p.addr, "GET", "/healthz", &[], b"").json()["status"],
        "ok"
    );
    let body = r#"{"operation":"op_1","amount":4200,"currency":"usd"}"#;
    let first = pay(&p, Some("k1"), body);
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(first.json()["approved"], true);
    let again = pay(&p, Some("\"k1\""), body);
    assert_eq!(
        again.json()["reference"],
        first.json()["reference"],
        "the sf-string spelling is the same key"
    );
    let other_op = pay(
        &p,
        Some("k1"),
        r#"{"operation":"op_2","amount":4200,"currency":"usd"}"#,
    );
    assert_ne!(
        other_op.json()["reference"],
        first.json()["reference"],
        "a new operation is a new payment"
    );
    let declined = pay(
        &p,
        Some("k2"),
        r#"{"operation":"op_1","amount":1,"currency":"usd","card":"4000000000000002"}"#,
    );
    assert_eq!(declined.json()["approved"], false);
    let stats = request(p.addr, "GET", "/v1/stats", &[("X-Customer-Id", "c")], b"").json();
    assert_eq!(
        (stats["calls"].as_i64(), stats["payments"].as_i64()),
        (Some(4), Some(3))
    );
    let found = request(
        p.addr,
        "GET",
        "/v1/payments?operation=op_1",
        &[("X-Customer-Id", "c"), ("Idempotency-Key", "k1")],
        b"",
    );
    assert_eq!(found.json()["reference"], first.json()["reference"]);
    assert_eq!(found.json()["amount"], 4200);
    let missing = request(
        p.addr,
        "GET",
        "/v1/payments?operation=op_9",
        &[("X-Customer-Id", "c"), ("Idempotency-Key", "k1")],
        b"",
    );
    assert_eq!(missing.status, 404);
    let stats = request(p.addr, "GET", "/v1/stats", &[("X-Customer-Id", "c")], b"").json();
    assert_eq!(stats["calls"], 4, "a look-up is not a call");

    // Wrong calls: no key, a malformed key, a body of the wrong shape.
    assert_eq!(pay(&p, None, body).status, 400);
    assert_eq!(pay(&p, Some("a b"), body).status, 400);
    for bad in [
        "",
        "{}",
        r#"{"operation":"op","amount":-1,"currency":"usd"}"#,
        "not json",
    ] {
        let r = pay(&p, Some("k3"), bad);
        assert_eq!(r.status / 100, 4, "{bad:?}: {}", r.text());
    }
    // Values no instance sends, refused with a 400 that names the member (an
    // amount beyond what its table holds was a 503 before, as if it were down).
    for (bad, member) in [
        (
            r#"{"operation":"op","amount":18446744073709551615,"currency":"usd"}"#,
            "amount",
        ),
        (
            r#"{"operation":"op","amount":0,"currency":"usd"}"#,
            "amount",
        ),
        (
            r#"{"operation":"op","amount":100000000,"currency":"usd"}"#,
            "amount",
        ),
        (
            r#"{"operation":"op","amount":1,"currency":"US"}"#,
            "currency",
        ),
        (
            r#"{"operation":"","amount":1,"currency":"usd"}"#,
            "operation",
        ),
        (
            r#"{"operation":"o p","amount":1,"currency":"usd"}"#,
            "operation",
        ),
        (
            r#"{"operation":"op","amount":1,"currency":"usd","card":"42x"}"#,
            "card",
        ),
    ] {
        let r = pay(&p, Some("k4"), bad);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        let error = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(error.contains(&format!("`{member}`")), "{bad}: {error}");
    }
    let stats = request(p.addr, "GET", "/v1/stats", &[("X-Customer-Id", "c")], b"").json();
    assert_eq!(stats["calls"], 4, "a refused call is not counted");
    let r = request(
        p.addr,
        "GET",
        "/v1/payments",
        &[("X-Customer-Id", "c"), ("Idempotency-Key", "k1")],
        b"",
    );
    assert_eq!(r.status, 400, "a look-up needs its operation");
    let r = request(p.addr, "GET", "/v1/stats", &[("X-Customer-Id", "a b")], b"");
    assert_eq!(r.status, 400);
}

fn an_instance_pays_through_the_service_with_the_clients_key(b: Backend) {
    let p = ProviderProc::start(5);
    let s = Server::start_with(b, &["--faults", "--provider-url", &p.url]);
    let (c, k) = (uid("cust"), uid("key"));
    let first = charge(s.addr, &c, &k, BODY);
    assert_eq!(first.status, 201, "{}", first.text());
    assert!(charge(s.addr, &c, &k, BODY).replayed());
    // The instance reports the service's counters, and the service has the
    // payment under the client's key.
    assert_eq!(provider_counts(s.addr, &c), (1, 1));
    let stats = request(p.addr, "GET", "/v1/stats", &[("X-Customer-Id", &c)], b"").json();
    assert_eq!(
        (stats["calls"].as_i64(), stats["payments"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        first.json()["provider_ref"]
            .as_str()
            .map(|r| r.starts_with("pay_")),
        Some(true)
    );
    // A declined card goes through it too, and is replayed.
    let k2 = uid("key");
    let declined = r#"{"amount":500,"currency":"eur","card":"4000000000000002"}"#;
    charge(s.addr, &c, &k2, declined).assert_problem(402);
    assert!(charge(s.addr, &c, &k2, declined).replayed());
    assert_eq!(provider_counts(s.addr, &c), (2, 2));
}

fn a_provider_that_is_down_is_a_503_and_the_retry_pays_once(b: Backend) {
    let p = ProviderProc::start(5);
    let url = p.url.clone();
    drop(p);
    let s = Server::start_with(b, &["--faults", "--provider-url", &url]);
    let (c, k) = (uid("cust"), uid("key"));
    let r = charge(s.addr, &c, &k, BODY);
    let prob = r.assert_problem(503);
    assert_eq!(prob["code"], "provider_unavailable");
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(ledger(s.addr, &c)["count"], 0);
    // The key was released: the retry, with a provider back, proceeds at once.
    let p2 = ProviderProc::start(5);
    let s2 = Server::start_on(s.db(), &["--faults", "--provider-url", &p2.url]);
    let ok = charge(s2.addr, &c, &k, BODY);
    assert_eq!(ok.status, 201, "{}", ok.text());
    assert_eq!(provider_counts(s2.addr, &c), (1, 1));
}

#[test]
fn bad_provider_urls_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["ftp://127.0.0.1:1", "http://127.0.0.1", "not a url"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_idemkey-server"))
            .args([
                "--addr",
                "127.0.0.1:0",
                "--provider-url",
                bad,
                "--log-level",
                "error",
            ])
            .arg("--db")
            .arg(dir.path().join("never.db"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--provider-url"),
            "{bad}"
        );
    }
}

both_stores!(
    an_instance_pays_through_the_service_with_the_clients_key,
    a_provider_that_is_down_is_a_503_and_the_retry_pays_once,
);
