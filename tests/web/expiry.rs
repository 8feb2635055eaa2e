//! Browser tests of a record's age (no server needed): an expired record or one older than
//! `ttlSeconds` gets a new key, and the first `open()` of a namespace sweeps what is due
//! (expired records, quarantined copies after seven days).

use crate::support::*;
use idemkey::core::record::{quarantine_key, Record};
use idemkey::core::state::State;
use wasm_bindgen_test::*;

// P-ttl-never-reused: an expired record is not reused
#[wasm_bindgen_test]
fn an_expired_record_gets_a_new_key() {
    let scope = uniq("expired");
    let now = js_sys::Date::now();
    let old = a_record(&scope, now - 10_000.0, 5_000.0, State::Succeeded);
    local()
        .set_item(&record_key("idemkey", &scope), &old.encode())
        .unwrap();
    let c = open(&opts(&scope, "nobody", "{}"));
    assert_ne!(c.key(), old.key);
    assert_eq!(c.state(), "fresh");
    c.finish();
}

/// A new scope whose record, made 5 s ago by a page with the default day-long TTL, is still
/// pending in localStorage: the scope and the record.
fn stored_5_s_ago(what: &str) -> (String, Record) {
    let scope = uniq(what);
    let old = a_record(
        &scope,
        js_sys::Date::now() - 5_000.0,
        86_400_000.0,
        State::Pending,
    );
    let rk = record_key("idemkey", &scope);
    local().set_item(&rk, &old.encode()).unwrap();
    (scope, old)
}

// P-ttl-never-reused: a key stored under a longer ttlSeconds is not reused past this one
#[wasm_bindgen_test]
fn a_lowered_ttl_seconds_retires_a_key_stored_under_a_longer_one() {
    let (scope, old) = stored_5_s_ago("ttl-lowered");
    let c = open(&opts(&scope, "nobody", r#"{"ttlSeconds":2}"#));
    assert_ne!(c.key(), old.key, "a 5 s old key reused under ttlSeconds 2");
    assert_eq!(c.state(), "fresh");
    c.finish();
    // Under a TTL it has not outlived, the same record is resumed, expiring by this TTL.
    let (scope, old) = stored_5_s_ago("ttl-kept");
    let d = open(&opts(&scope, "nobody", r#"{"ttlSeconds":60}"#));
    assert_eq!(d.key(), old.key);
    assert_eq!(d.expires_at(), old.created_at + 60_000.0);
    d.finish();
}

// P-ttl-never-reused: a key older than ttlSeconds is not reused
#[wasm_bindgen_test]
async fn a_key_older_than_ttl_seconds_is_not_reused() {
    let scope = uniq("ttl");
    let c = open(&opts(&scope, "nobody", r#"{"ttlSeconds":1}"#));
    let k = c.key();
    assert_eq!(
        open(&opts(&scope, "nobody", r#"{"ttlSeconds":1}"#)).key(),
        k
    );
    sleep(1100).await;
    // Opened again in this page, where the first checkout of the scope is still open: the
    // expired key is not reused, and both show the new one.
    let (o, ev) = recorded_opts(&scope, "nobody", r#"{"ttlSeconds":1}"#);
    let later = open(&o);
    assert_ne!(later.key(), k);
    assert_eq!(c.key(), later.key());
    let changed = events_of(&ev, "key-changed");
    assert_eq!(changed.len(), 1, "{:?}", types(&ev));
    assert_eq!(text(&changed[0], "previous"), k);
    later.finish();
}

// P-sweep: the first open() of a namespace in a page deletes its expired records, and only those
#[wasm_bindgen_test]
fn the_first_open_of_a_namespace_removes_its_expired_records_only() {
    let ns = &uniq("sw").replace('-', "")[..16];
    let now = js_sys::Date::now();
    let s = local();
    let put = |scope: &str, text: &str| s.set_item(&record_key(ns, scope), text).unwrap();
    put(
        "old-1",
        &a_record("old-1", now - 10_000.0, 1_000.0, State::Pending).encode(),
    );
    put(
        "old-2",
        &a_record("old-2", now - 10_000.0, 1_000.0, State::Fresh).encode(),
    );
    put(
        "live",
        &a_record("live", now, 60_000.0, State::Succeeded).encode(),
    );
    put("junk", "not a record");
    let other = format!("{ns}x");
    s.set_item(
        &record_key(&other, "old"),
        &a_record("old", now - 10_000.0, 1.0, State::Fresh).encode(),
    )
    .unwrap();
    let c = open(&opts(
        &uniq("cart"),
        "nobody",
        &format!(r#"{{"namespace":"{ns}"}}"#),
    ));
    assert_eq!(s.get_item(&record_key(ns, "old-1")).unwrap(), None);
    assert_eq!(s.get_item(&record_key(ns, "old-2")).unwrap(), None);
    assert!(s.get_item(&record_key(ns, "live")).unwrap().is_some());
    assert!(s.get_item(&record_key(ns, "junk")).unwrap().is_some());
    assert!(
        s.get_item(&record_key(&other, "old")).unwrap().is_some(),
        "other namespaces untouched"
    );
    c.finish();
    for k in [
        record_key(ns, "live"),
        record_key(ns, "junk"),
        record_key(&other, "old"),
    ] {
        s.remove_item(&k).unwrap();
    }
}

// P-corrupt-set-aside: set-aside copies go after 7 days, at the first open() of their namespace in a page
#[wasm_bindgen_test]
fn quarantined_copies_are_swept_after_seven_days_by_the_first_open() {
    let ns = &uniq("qs").replace('-', "")[..16];
    let now = js_sys::Date::now();
    let day = 86_400_000.0;
    let s = local();
    let put = |scope: &str, age_days: f64| {
        let k = quarantine_key(ns, scope, now - age_days * day);
        s.set_item(&k, "{not json").unwrap();
        k
    };
    let old = put("a:b", 8.0);
    let recent = put("a:b", 6.0);
    let other_ns = quarantine_key(&format!("{ns}x"), "a", now - 30.0 * day);
    s.set_item(&other_ns, "{not json").unwrap();
    let old_of_another_scope = put("c", 30.0);
    let c = open(&opts(
        &uniq("cart"),
        "nobody",
        &format!(r#"{{"namespace":"{ns}"}}"#),
    ));
    assert_eq!(s.get_item(&old).unwrap(), None, "older than 7 days: gone");
    assert_eq!(
        s.get_item(&old_of_another_scope).unwrap(),
        None,
        "another scope's, older than 7 days: gone"
    );
    assert!(s.get_item(&recent).unwrap().is_some(), "6 days: kept");
    assert!(
        s.get_item(&other_ns).unwrap().is_some(),
        "other namespace untouched"
    );
    c.finish();
    for k in [recent, other_ns] {
        s.remove_item(&k).unwrap();
    }
}
