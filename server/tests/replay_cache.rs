//! The cache of completed answers: replays and 422s of a key read once as
//! completed are answered without the store, byte for byte and only within
//! the key's customer, and never after the key expires, on any instance.

mod common;

use std::time::{Duration, Instant};

use common::*;

/// The `cached` field of the log line of the last charge answered with `key`.
fn answered_from_cache(s: &Server, key: &str) -> Option<bool> {
    let log = s.log_text();
    let line = log
        .lines()
        .rfind(|l| l.contains("charge answered") && l.contains(&format!("key=\"{key}\" ")))?;
    Some(line.contains("cached=true"))
}

fn replays_and_422s_after_one_look_up_skip_the_store(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5", "--log-level", "info"]);
    let (c, k) = (uid("cache"), uid("key"));
    let first = charge(s.addr, &c, &k, BODY);
    assert_eq!(first.status, 201, "{}", first.text());
    assert_eq!(answered_from_cache(&s, &k), Some(false));
    let read = charge(s.addr, &c, &k, BODY);
    assert!(read.replayed() && read.body == first.body);
    assert_eq!(
        answered_from_cache(&s, &k),
        Some(false),
        "the first replay reads the store"
    );
    for _ in 0..3 {
        let again = charge(s.addr, &c, &k, BODY);
        assert!(again.replayed(), "{}", again.text());
        assert_eq!(again.body, first.body, "byte for byte");
        assert_eq!(again.header("content-type"), first.header("content-type"));
        assert_eq!(answered_from_cache(&s, &k), Some(true));
    }
    // Another payload: 422, from the cache as from the store.
    let other = BODY.replace("4200", "4300");
    charge(s.addr, &c, &k, &other).assert_problem(422);
    // Another customer with the same key and payload: its own new charge.
    let c2 = uid("cache-other");
    let theirs = charge(s.addr, &c2, &k, BODY);
    assert_eq!(theirs.status, 201, "{}", theirs.text());
    assert!(!theirs.replayed());
    assert_eq!(theirs.json()["customer"], c2.as_str());
    assert_eq!(ledger(s.addr, &c)["count"], 1);
    assert_eq!(ledger(s.addr, &c2)["count"], 1);
}

fn a_declined_answer_is_cached_like_any_other(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5", "--log-level", "info"]);
    let (c, k) = (uid("cache-402"), uid("key"));
    let body = r#"{"amount":100,"currency":"usd","card":"4000000000000002"}"#;
    let first = charge(s.addr, &c, &k, body);
    first.assert_problem(402);
    charge(s.addr, &c, &k, body);
    let again = charge(s.addr, &c, &k, body);
    assert_eq!(answered_from_cache(&s, &k), Some(true));
    assert!(again.replayed());
    assert_eq!((again.status, &again.body), (402, &first.body));
    assert_eq!(ledger(s.addr, &c)["count"], 0);
}

/// Two instances on one store, each with its cache: after the key expires,
/// a new operation under it on one instance is what the other answers, not
/// the answer its cache held.
fn no_instance_answers_from_its_cache_after_the_key_expired(b: Backend) {
    let db = Db::new(b);
    let flags = [
        "--provider-latency-ms",
        "5",
        "--key-ttl",
        "2s",
        "--lock-timeout",
        "200ms",
        "--log-level",
        "info",
    ];
    let one = Server::start_on(&db, &flags);
    let two = Server::start_on(&db, &flags);
    let (c, k) = (uid("cache-ttl"), uid("key"));
    let first = charge(one.addr, &c, &k, BODY);
    assert_eq!(first.status, 201, "{}", first.text());
    // The key was reserved before this instant, so it expires before `deadline`.
    let deadline = Instant::now() + Duration::from_millis(2_500);
    for _ in 0..3 {
        let r = charge(two.addr, &c, &k, BODY);
        if Instant::now() >= deadline {
            break; // a very slow machine: the key may have expired already
        }
        assert!(r.replayed() && r.body == first.body, "{}", r.text());
    }
    if Instant::now() < deadline {
        std::thread::sleep(deadline - Instant::now());
    }
    let second = charge(one.addr, &c, &k, BODY);
    assert_eq!(second.status, 201, "{}", second.text());
    assert!(!second.replayed(), "an expired key replayed");
    assert_ne!(second.json()["id"], first.json()["id"]);
    let on_two = charge(two.addr, &c, &k, BODY);
    assert!(on_two.replayed(), "{}", on_two.text());
    assert_eq!(
        on_two.text(),
        second.text(),
        "instance two answered the expired operation"
    );
    assert_eq!(ledger(one.addr, &c)["count"], 2);
}

both_stores!(
    replays_and_422s_after_one_look_up_skip_the_store,
    a_declined_answer_is_cached_like_any_other,
    no_instance_answers_from_its_cache_after_the_key_expired,
);
