//! The shop whose provider deduplicates by key (`--provider-dedups`): an
//! order's only durable commit is the order with its answer, and nothing of
//! it is on disk before. Killed with `kill -9` after the provider answered
//! and before that commit, the order is repaired by its retry, at once (no
//! lock waits for a timeout): the provider is called again under the same
//! operation id and answers its first payment, so it is one order and one
//! payment; retried with another payload instead, it reaches the provider
//! under the same operation id and is refused, paid once. While a request
//! holds a key, on any instance, the key's other requests are 409. On SQLite and on a real PostgreSQL, on one instance and
//! on two sharing the database.

mod common;

use common::*;

/// The shop's flag for a provider that deduplicates by the key it is given.
const DEDUP: &[&str] = &["--provider-dedups"];

/// An order `key` of 4200 sent to `addr` on a thread of its own.
fn order_in_background(addr: &str, key: &'static str) -> std::thread::JoinHandle<Option<Reply>> {
    let addr = addr.to_string();
    std::thread::spawn(move || http(&addr, "POST", "/orders", Some(key), r#"{"amount":4200}"#))
}

fn order(addr: &str, key: &str, body: &str) -> Reply {
    http(addr, "POST", "/orders", Some(key), body).expect("an answer")
}

/// The order "k-dedup" of `body` at `addr` once the key is free: a 409
/// only while PostgreSQL has yet to see a killed shop's connection close.
fn retry(addr: &str, body: &str) -> Reply {
    let started = std::time::Instant::now();
    loop {
        let r = order(addr, "k-dedup", body);
        if r.status != 409 || started.elapsed() > std::time::Duration::from_millis(LOCK_MS / 2) {
            return r;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A shop on `database` killed with `kill -9` between the provider's answer
/// to the order "k-dedup" of 4200 and its commit; the provider, its URL and
/// its address.
fn killed_after_the_provider(database: &str) -> (Proc, String, String) {
    let (provider, provider_url, provider_addr) = provider();
    let (mut first, addr) = shop(database, &provider_url, &[DEDUP, PAUSE].concat());
    let client = order_in_background(&addr, "k-dedup");
    assert_eq!(first.expect("provider answered "), "k-dedup");
    first.kill9();
    assert!(client.join().unwrap().is_none(), "a killed shop answered");
    (provider, provider_url, provider_addr)
}

/// After the kill, the retry at `addr` is the order with the first payment,
/// paid once, well within the lock timeout (a 409, with `Retry-After`, only
/// while PostgreSQL has yet to see the killed shop's connection close); its
/// replay is byte for byte, another payload a 422.
fn the_retry_is_one_order_paid_once(addr: &str, provider_addr: &str) {
    let done = retry(addr, r#"{"amount":4200}"#);
    assert_eq!(done.status, 201, "{}", String::from_utf8_lossy(&done.body));
    assert_eq!(done.header("idempotent-replayed"), None);
    assert_eq!(done.json()["amount"], 4200);
    assert_eq!(done.json()["payment"], "pay_1", "the first call's payment");
    let stats = provider_stats(provider_addr);
    assert_eq!(stats["payments"], 1, "paid once: {stats}");
    assert_eq!(
        stats["calls"], 2,
        "called again, answered its replay: {stats}"
    );
    assert_eq!(orders(addr).len(), 1);

    let again = order(addr, "k-dedup", r#"{ "amount": 4200 }"#);
    assert_eq!((again.status, &again.body), (201, &done.body));
    assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
    let other = order(addr, "k-dedup", r#"{"amount":1}"#);
    assert_eq!(other.status, 422, "another payload under the key");
    assert_eq!(orders(addr).len(), 1);
    assert_eq!(provider_stats(provider_addr)["payments"], 1);
}

fn killed_after_the_provider_then_retried_at_once(database: &str) {
    let (_provider, provider_url, provider_addr) = killed_after_the_provider(database);
    assert_eq!(provider_stats(&provider_addr)["payments"], 1);

    let (_second, addr) = shop(database, &provider_url, DEDUP);
    assert!(
        orders(&addr).is_empty(),
        "nothing was committed before the kill"
    );
    the_retry_is_one_order_paid_once(&addr, &provider_addr);
}

#[test]
fn sqlite_a_killed_order_is_repaired_by_its_retry_at_once() {
    let (_dir, db) = sqlite_db();
    killed_after_the_provider_then_retried_at_once(&db);
}

#[test]
fn postgres_a_killed_order_is_repaired_by_its_retry_at_once() {
    killed_after_the_provider_then_retried_at_once(&pg::Pg::shared().fresh_database());
}

/// Killed after the provider's answer, then retried with another payload:
/// nothing is stored to compare it with, so the retry reaches the provider
/// under the first try's operation id, which answers the first payment; the
/// shop finds that payment of another amount and refuses the order (422),
/// paid once and recorded nowhere. The first payload's retry is then the
/// order.
fn killed_after_the_provider_then_retried_with_another_payload(database: &str) {
    let (_provider, provider_url, provider_addr) = killed_after_the_provider(database);
    let (_second, addr) = shop(database, &provider_url, DEDUP);
    let other = retry(&addr, r#"{"amount":1}"#);
    assert_eq!(
        other.status,
        422,
        "{}",
        String::from_utf8_lossy(&other.body)
    );
    let stats = provider_stats(&provider_addr);
    assert_eq!(stats["payments"], 1, "never paid again: {stats}");
    assert!(orders(&addr).is_empty(), "no order of the other amount");

    let done = order(&addr, "k-dedup", r#"{"amount":4200}"#);
    assert_eq!(done.status, 201, "{}", String::from_utf8_lossy(&done.body));
    assert_eq!(done.json()["payment"], "pay_1", "the first call's payment");
    assert_eq!(provider_stats(&provider_addr)["payments"], 1);
    assert_eq!(orders(&addr).len(), 1);
}

#[test]
fn sqlite_a_killed_order_retried_with_another_payload_is_refused_and_paid_once() {
    let (_dir, db) = sqlite_db();
    killed_after_the_provider_then_retried_with_another_payload(&db);
}

#[test]
fn postgres_a_killed_order_retried_with_another_payload_is_refused_and_paid_once() {
    killed_after_the_provider_then_retried_with_another_payload(&pg::Pg::shared().fresh_database());
}

/// Two instances on one database: while the first holds a key, between the
/// provider's answer and the commit, the second answers the key 409; killed,
/// the first lets go of it with its connection, and the retry on the second
/// is the order, paid once.
#[test]
fn postgres_two_instances_one_key_one_payment() {
    let db = pg::Pg::shared().fresh_database();
    let (_provider, provider_url, provider_addr) = provider();
    let (mut first, first_addr) = shop(&db, &provider_url, &[DEDUP, PAUSE].concat());
    let (_second, addr) = shop(&db, &provider_url, DEDUP);
    let client = order_in_background(&first_addr, "k-dedup");
    assert_eq!(first.expect("provider answered "), "k-dedup");

    let busy = order(&addr, "k-dedup", r#"{"amount":4200}"#);
    assert_eq!(busy.status, 409, "{}", String::from_utf8_lossy(&busy.body));
    assert_eq!(busy.header("retry-after").as_deref(), Some("1"));
    assert_eq!(busy.json()["code"], "request_in_progress");

    first.kill9();
    assert!(client.join().unwrap().is_none(), "a killed shop answered");
    the_retry_is_one_order_paid_once(&addr, &provider_addr);
}

#[test]
fn sqlite_a_burst_of_one_key_is_one_order() {
    let (_dir, db) = sqlite_db();
    a_burst_of_one_key_is_one_order(&db, DEDUP);
}

#[test]
fn postgres_a_burst_of_one_key_is_one_order() {
    a_burst_of_one_key_is_one_order(&pg::Pg::shared().fresh_database(), DEDUP);
}

#[test]
fn sqlite_the_conformance_runner_passes() {
    let (_dir, db) = sqlite_db();
    the_conformance_runner_passes(&db, DEDUP);
}

#[test]
fn postgres_the_conformance_runner_passes() {
    the_conformance_runner_passes(&pg::Pg::shared().fresh_database(), DEDUP);
}
