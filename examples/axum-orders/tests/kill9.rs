//! The shop's promise, with real processes: an order whose request is killed
//! with `kill -9` after the provider answered and before the commit is
//! recovered once and never paid twice, whether the client retries it (409
//! while the lock is live, then one order) or never comes back (the reaper
//! completes it from the provider's record); a replay is byte for byte the
//! first answer. A burst of one key (a double-click) is one order. On SQLite
//! and on a real PostgreSQL.

mod common;

use std::time::{Duration, Instant};

use common::*;

fn killed_between_phases_then_retried_or_abandoned(database: &str) {
    let (_provider, provider_url, provider_addr) = provider();

    // Two orders reach the provider, then the shop is killed before either commits.
    let (mut first, addr) = shop(database, &provider_url, PAUSE);
    let clients: Vec<_> = [
        ("k-retried", r#"{"amount":4200}"#),
        ("k-abandoned", r#"{"amount":990}"#),
    ]
    .into_iter()
    .map(|(key, body)| {
        let addr = addr.clone();
        std::thread::spawn(move || http(&addr, "POST", "/orders", Some(key), body))
    })
    .collect();
    let mut answered = [
        first.expect("provider answered "),
        first.expect("provider answered "),
    ];
    answered.sort();
    assert_eq!(answered, ["k-abandoned", "k-retried"]);
    first.kill9();
    for c in clients {
        assert!(c.join().unwrap().is_none(), "a killed shop answered");
    }
    let stats = provider_stats(&provider_addr);
    assert_eq!(stats["payments"], 2, "{stats}");

    // The shop comes back. The retried key is in progress until its lock times out.
    let (_second, addr) = shop(database, &provider_url, &[]);
    let started = Instant::now();
    assert!(
        orders(&addr).is_empty(),
        "nothing was committed before the kill"
    );
    let busy = http(
        &addr,
        "POST",
        "/orders",
        Some("k-retried"),
        r#"{"amount":4200}"#,
    )
    .unwrap();
    assert_eq!(busy.status, 409, "{}", String::from_utf8_lossy(&busy.body));
    assert_eq!(busy.header("retry-after").as_deref(), Some("1"));
    assert_eq!(
        busy.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    assert_eq!(busy.json()["code"], "request_in_progress");
    let other = http(
        &addr,
        "POST",
        "/orders",
        Some("k-retried"),
        r#"{"amount":1}"#,
    )
    .unwrap();
    assert_eq!(other.status, 422, "another payload under the key");

    // Retried as a client would (Retry-After), it is one order with the first payment.
    let done = loop {
        std::thread::sleep(Duration::from_millis(250));
        let r = http(
            &addr,
            "POST",
            "/orders",
            Some("k-retried"),
            r#"{"amount":4200}"#,
        )
        .unwrap();
        if r.status != 409 {
            break r;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "still 409 after 20 s"
        );
    };
    assert_eq!(done.status, 201, "{}", String::from_utf8_lossy(&done.body));
    assert_eq!(done.json()["amount"], 4200);

    // Never retried, the other is completed by the reaper from the provider's record.
    let abandoned = loop {
        let all = orders(&addr);
        if let Some(o) = all.iter().find(|o| o["amount"] == 990) {
            break o.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "not recovered: {all:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let all = orders(&addr);
    assert_eq!(all.len(), 2, "one order each: {all:?}");
    let stats = provider_stats(&provider_addr);
    assert_eq!(stats["payments"], 2, "nothing paid twice: {stats}");

    // A late retry of each is the stored answer, byte for byte.
    let again = http(
        &addr,
        "POST",
        "/orders",
        Some("k-retried"),
        r#"{ "amount": 4200 }"#,
    )
    .unwrap();
    assert_eq!((again.status, &again.body), (201, &done.body));
    assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
    let late = http(
        &addr,
        "POST",
        "/orders",
        Some("k-abandoned"),
        r#"{"amount":990}"#,
    )
    .unwrap();
    assert_eq!(late.status, 201);
    assert_eq!(late.header("idempotent-replayed").as_deref(), Some("true"));
    assert_eq!(late.json(), abandoned);
    assert_eq!(orders(&addr).len(), 2);
    let stats = provider_stats(&provider_addr);
    assert_eq!(stats["payments"], 2, "{stats}");
}

#[test]
fn sqlite_a_killed_order_is_recovered_once() {
    let (_dir, db) = sqlite_db();
    killed_between_phases_then_retried_or_abandoned(&db);
}

#[test]
fn postgres_a_killed_order_is_recovered_once() {
    let url = pg::Pg::shared().fresh_database();
    killed_between_phases_then_retried_or_abandoned(&url);
}

#[test]
fn refusals_are_problem_documents_and_store_nothing() {
    let (_provider, provider_url, _) = provider();
    let (_dir, db) = sqlite_db();
    let (_shop, addr) = shop(&db, &provider_url, &[]);
    let missing = http(&addr, "POST", "/orders", None, r#"{"amount":1}"#).unwrap();
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["code"], "missing_idempotency_key");
    let bad = http(&addr, "POST", "/orders", Some("a b"), r#"{"amount":1}"#).unwrap();
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["code"], "invalid_idempotency_key");
    assert!(orders(&addr).is_empty());
}

#[test]
fn sqlite_a_burst_of_one_key_is_one_order() {
    let (_dir, db) = sqlite_db();
    a_burst_of_one_key_is_one_order(&db, &[]);
}

#[test]
fn postgres_a_burst_of_one_key_is_one_order() {
    a_burst_of_one_key_is_one_order(&pg::Pg::shared().fresh_database(), &[]);
}

#[test]
fn sqlite_the_conformance_runner_passes() {
    let (_dir, db) = sqlite_db();
    the_conformance_runner_passes(&db, &[]);
}

#[test]
fn postgres_the_conformance_runner_passes() {
    the_conformance_runner_passes(&pg::Pg::shared().fresh_database(), &[]);
}
