//! The keyed charge endpoint against the real binary: each status, replay byte
//! for byte, 422, 409 during the provider call, declined card, TTL expiry.

mod common;

use std::time::{Duration, Instant};

use common::*;

fn first_request_is_201_and_every_repeat_is_the_same_bytes_with_the_replay_header(b: Backend) {
    let s = Server::start_with(b, &["--faults", "--provider-latency-ms", "20"]);
    let (c, k) = (uid("cust"), uid("key"));
    let first = charge(s.addr, &c, &k, BODY);
    assert_eq!(first.status, 201, "{}", first.text());
    assert_eq!(first.header("content-type"), Some("application/json"));
    assert!(!first.replayed());
    let ch = first.json();
    assert!(ch["id"].as_str().unwrap().starts_with("ch_"));
    assert_eq!(
        (ch["key"].as_str(), ch["customer"].as_str()),
        (Some(k.as_str()), Some(c.as_str()))
    );
    assert_eq!(
        (
            ch["amount"].as_u64(),
            ch["currency"].as_str(),
            ch["status"].as_str()
        ),
        (Some(4200), Some("usd"), Some("succeeded"))
    );

    // Same key, same payload: the stored answer, byte for byte.
    let again = charge(s.addr, &c, &k, BODY);
    assert_eq!(again.status, 201);
    assert!(again.replayed());
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("content-type"), Some("application/json"));
    // The sf-string spelling of the key and another key order are the same request.
    let quoted = charge(
        s.addr,
        &c,
        &format!("\"{k}\""),
        r#"{ "card":"4242424242424242", "currency":"usd",
        "items":[{"qty":2,"sku":"tee"}], "amount":4200 }"#,
    );
    assert!(quoted.replayed());
    assert_eq!(quoted.body, first.body);

    let l = ledger(s.addr, &c);
    assert_eq!(l["count"], 1);
    assert_eq!(l["charges"][0]["id"], ch["id"]);
    assert_eq!(l["charges"][0]["key"].as_str(), Some(k.as_str()));
    assert_eq!(
        provider_counts(s.addr, &c),
        (1, 1),
        "replays never reach the provider"
    );
}

fn same_key_with_another_payload_is_422_and_changes_nothing(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "10"]);
    let (c, k) = (uid("cust"), uid("key"));
    let first = charge(s.addr, &c, &k, BODY);
    assert_eq!(first.status, 201);
    let other = charge(
        s.addr,
        &c,
        &k,
        r#"{"amount":4201,"currency":"usd","items":[{"sku":"tee","qty":2}],"card":"4242424242424242"}"#,
    );
    other.assert_problem(422);
    assert!(!other.replayed());
    assert_eq!(ledger(s.addr, &c)["count"], 1);
    // The stored answer is untouched.
    assert_eq!(charge(s.addr, &c, &k, BODY).body, first.body);
}

fn keys_are_scoped_by_customer(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "10"]);
    let (a, b, k) = (uid("a"), uid("b"), uid("key"));
    let ra = charge(s.addr, &a, &k, BODY);
    let rb = charge(s.addr, &b, &k, BODY);
    assert_eq!((ra.status, rb.status), (201, 201));
    assert!(
        !ra.replayed() && !rb.replayed(),
        "the same key from two customers is two operations"
    );
    assert_ne!(ra.json()["id"], rb.json()["id"]);
    assert_eq!(ledger(s.addr, &a)["count"], 1);
    assert_eq!(ledger(s.addr, &b)["count"], 1);
    // No X-Customer-Id: the anonymous customer.
    let anon = request(
        s.addr,
        "POST",
        "/api/charges",
        &[
            ("Content-Type", "application/json"),
            ("Idempotency-Key", &k),
        ],
        BODY.as_bytes(),
    );
    assert_eq!(anon.status, 201);
    assert_eq!(anon.json()["customer"], "anonymous");
    assert!(ledger(s.addr, "anonymous")["count"].as_u64().unwrap() >= 1);
}

fn declined_card_is_a_stored_and_replayed_402(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "10"]);
    let (c, k) = (uid("cust"), uid("key"));
    let body = r#"{"amount":500,"currency":"eur","card":"4000 0000 0000 0002"}"#;
    let first = charge(s.addr, &c, &k, body);
    let p = first.assert_problem(402);
    assert_eq!(p["code"], "card_declined");
    assert_eq!(p["key"].as_str(), Some(k.as_str()));
    assert!(!first.replayed());
    let again = charge(s.addr, &c, &k, body);
    assert_eq!(again.status, 402);
    assert!(again.replayed());
    assert_eq!(again.body, first.body);
    assert_eq!(
        again.header("content-type"),
        Some("application/problem+json")
    );
    assert_eq!(ledger(s.addr, &c)["count"], 0, "a decline is not a charge");
}

fn second_request_during_the_provider_call_is_409_with_retry_after(b: Backend) {
    let s = Server::start_with(b, &["--faults", "--provider-latency-ms", "2000"]);
    let (c, k) = (uid("cust"), uid("key"));
    let addr = s.addr;
    let (c1, k1) = (c.clone(), k.clone());
    let first = std::thread::spawn(move || charge(addr, &c1, &k1, BODY));
    // Phase 1 committed: the first request is now in the provider call.
    wait_reserved(s.db(), &c, &k);
    let during = charge(addr, &c, &k, BODY);
    assert!(
        !first.is_finished(),
        "the 409 must come while the first request still runs, not after it"
    );
    during.assert_problem(409);
    assert_eq!(during.header("retry-after"), Some("1"));
    // A different payload during the call is still a 422: the payload is wrong whatever the state.
    charge(addr, &c, &k, r#"{"amount":1,"currency":"usd"}"#).assert_problem(422);
    let first = first.join().unwrap();
    assert_eq!(first.status, 201);
    assert!(!first.replayed());
    let after = charge(addr, &c, &k, BODY);
    assert!(after.replayed());
    assert_eq!(after.body, first.body);
    assert_eq!(ledger(addr, &c)["count"], 1);
    assert_eq!(get_json(addr, "/api/provider", &c)["calls"], 1);
}

fn a_slow_request_whose_lock_is_taken_over_still_makes_one_payment_and_one_charge(b: Backend) {
    // Slow, not dead: the provider call outlasts --lock-timeout, so a retry
    // takes the key over while the first request still runs. The takeover
    // keeps the operation id, so the provider pays once; only the lock holder
    // may commit, so the ledger gets one charge.
    let s = Server::start_with(
        b,
        &[
            "--faults",
            "--provider-latency-ms",
            "2000",
            "--lock-timeout",
            "300ms",
        ],
    );
    let (c, k) = (uid("cust"), uid("key"));
    let (addr, c1, k1) = (s.addr, c.clone(), k.clone());
    let first = std::thread::spawn(move || charge(addr, &c1, &k1, BODY));
    wait_reserved(s.db(), &c, &k);
    // The lock was stamped before we saw it: it is stale after this.
    std::thread::sleep(Duration::from_millis(400));
    let second = charge(addr, &c, &k, BODY);
    let first = first.join().unwrap();
    let answers = [&first, &second];
    let fresh = answers
        .iter()
        .filter(|r| r.status == 201 && !r.replayed())
        .count();
    assert_eq!(
        fresh, 1,
        "first {} / second {}",
        first.status, second.status
    );
    for r in answers {
        match r.status {
            201 => assert_eq!(r.json()["id"], ledger(addr, &c)["charges"][0]["id"]),
            409 => {
                r.assert_problem(409);
            }
            other => panic!("unexpected {other}: {}", r.text()),
        }
    }
    assert_eq!(ledger(addr, &c)["count"], 1);
    assert_eq!(
        provider_counts(addr, &c),
        (2, 1),
        "both asked the provider, one payment"
    );
    assert!(charge(addr, &c, &k, BODY).replayed());
}

fn after_the_ttl_a_key_is_a_new_operation(b: Backend) {
    // Reaper effectively off: phase 1 itself must treat an expired key as new.
    let s = Server::start_with(
        b,
        &[
            "--key-ttl",
            "2s",
            "--lock-timeout",
            "200ms",
            "--reaper-interval",
            "1h",
            "--provider-latency-ms",
            "10",
        ],
    );
    let (c, k) = (uid("cust"), uid("key"));
    let first = charge(s.addr, &c, &k, BODY);
    assert_eq!(first.status, 201);
    assert!(
        charge(s.addr, &c, &k, BODY).replayed(),
        "within the TTL: replay"
    );
    // Expiry counts from phase 1 of the first request, before `first` came back.
    std::thread::sleep(Duration::from_millis(2100));
    // Expired: a new operation, even with another payload (no 422).
    let other = r#"{"amount":99,"currency":"usd"}"#;
    let second = charge(s.addr, &c, &k, other);
    assert_eq!(second.status, 201, "{}", second.text());
    assert!(!second.replayed());
    assert_ne!(second.json()["id"], first.json()["id"]);
    let l = ledger(s.addr, &c);
    assert_eq!(
        l["count"], 2,
        "documented: a retry after the TTL is a new charge"
    );
    assert!(
        charge(s.addr, &c, &k, other).replayed(),
        "the new operation is remembered in its turn"
    );
}

fn the_reaper_deletes_expired_keys_but_not_charges(b: Backend) {
    let s = Server::start_with(
        b,
        &[
            "--key-ttl",
            "2s",
            "--lock-timeout",
            "200ms",
            "--reaper-interval",
            "100ms",
            "--provider-latency-ms",
            "5",
        ],
    );
    let c = uid("cust");
    let first = Instant::now();
    for _ in 0..3 {
        assert_eq!(charge(s.addr, &c, &uid("key"), BODY).status, 201);
    }
    let count_keys = || -> i64 {
        s.db()
            .sql(&format!(
                "SELECT COUNT(*) FROM idempotency_keys WHERE customer = {}",
                Db::quote(&c)
            ))
            .expect("a count")
            .parse()
            .expect("a number")
    };
    let kept = count_keys();
    // A loaded machine may take the whole TTL to get here.
    if first.elapsed() < Duration::from_secs(2) {
        assert_eq!(kept, 3, "reaped before they expired");
    }
    let t0 = Instant::now();
    while count_keys() > 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "the reaper did not delete expired keys"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(ledger(s.addr, &c)["count"], 3);
}

fn healthz_and_ledger_shape(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let h = request(s.addr, "GET", "/healthz", &[], b"");
    assert_eq!(h.status, 200);
    assert_eq!(h.json()["status"], "ok");
    let c = uid("cust");
    let empty = ledger(s.addr, &c);
    assert_eq!(
        (
            empty["count"].as_u64(),
            empty["charges"].as_array().map(Vec::len)
        ),
        (Some(0), Some(0))
    );
    let keys: Vec<String> = (0..3).map(|_| uid("key")).collect();
    for k in &keys {
        assert_eq!(charge(s.addr, &c, k, BODY).status, 201);
    }
    let l = ledger(s.addr, &c);
    assert_eq!(l["count"], 3);
    assert_eq!(
        charge_keys(&l),
        keys.iter().map(String::as_str).collect::<Vec<_>>(),
        "oldest first"
    );
    for ch in l["charges"].as_array().unwrap() {
        for m in ["id", "key", "amount", "currency", "status", "created_at"] {
            assert!(!ch[m].is_null(), "{m} missing in {ch}");
        }
    }
}

both_stores!(
    first_request_is_201_and_every_repeat_is_the_same_bytes_with_the_replay_header,
    same_key_with_another_payload_is_422_and_changes_nothing,
    keys_are_scoped_by_customer,
    declined_card_is_a_stored_and_replayed_402,
    second_request_during_the_provider_call_is_409_with_retry_after,
    a_slow_request_whose_lock_is_taken_over_still_makes_one_payment_and_one_charge,
    after_the_ttl_a_key_is_a_new_operation,
    the_reaper_deletes_expired_keys_but_not_charges,
    healthz_and_ledger_shape,
);
