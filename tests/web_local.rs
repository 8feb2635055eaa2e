//! Browser tests that need no server: options, storage, fallback, corrupt records, expiry,
//! sweep, reset/finish and the cross-tab `storage` event.
#![cfg(target_arch = "wasm32")]

mod support;

use idemkey::core::record::{Record, StoredResponse};
use idemkey::core::state::State;
use idemkey::{sweep, Checkout};
use support::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn bad_options(o: JsValue, option: &str) {
    match Checkout::open(o) {
        Ok(_) => panic!("open accepted a bad `{option}`"),
        Err(e) => assert_idem_error(&e, "invalid-options", &format!("`{option}`")),
    }
}

fn base(extra: &str) -> JsValue {
    opts(&uniq("opt"), "nobody", extra)
}

#[wasm_bindgen_test]
fn invalid_options_name_the_option() {
    bad_options(base(r#"{"scope":""}"#), "scope");
    bad_options(base(&format!(r#"{{"scope":"{}"}}"#, "x".repeat(201))), "scope");
    bad_options(js(r#"{"endpoint":"/x"}"#), "scope");
    bad_options(js(r#"{"scope":"s"}"#), "endpoint");
    bad_options(base(r#"{"endpoint":""}"#), "endpoint");
    bad_options(base(r#"{"scope":42}"#), "scope");
    bad_options(base(r#"{"ttlSeconds":-1}"#), "ttlSeconds");
    bad_options(base(r#"{"timeoutMs":1.5}"#), "timeoutMs");
    bad_options(base(r#"{"maxRetries":"3"}"#), "maxRetries");
    bad_options(base(r#"{"deadlineMs":0}"#), "deadlineMs");
    bad_options(base(r#"{"storage":"disk"}"#), "storage");
    bad_options(base(r#"{"headerFormat":"quoted"}"#), "headerFormat");
    bad_options(base(r#"{"headerName":"Bad Name"}"#), "headerName");
    bad_options(base(r#"{"method":"GET"}"#), "method");
    bad_options(base(r#"{"namespace":"a:b"}"#), "namespace");
    bad_options(base(r#"{"credentials":"always"}"#), "credentials");
    bad_options(base(r#"{"backoff":{"baseMs":500,"maxMs":100}}"#), "backoff.baseMs");
    bad_options(base(r#"{"backoff":{"maxMs":-5}}"#), "backoff.maxMs");
    bad_options(base(r#"{"backoff":{"base":5}}"#), "backoff.base");
    bad_options(base(r#"{"backoff":7}"#), "backoff");
    bad_options(base(r#"{"scoop":"typo"}"#), "scoop");
    bad_options(base(r#"{"onEvent":"log"}"#), "onEvent");
    let o = base("{}");
    set(&o, "headers", &js(r#"{"X-A":1}"#));
    bad_options(o, "headers");
    bad_options(JsValue::UNDEFINED, "options");
    bad_options(JsValue::from_str("scope"), "options");
}

#[wasm_bindgen_test]
fn open_creates_and_stores_a_fresh_record() {
    let scope = uniq("fresh");
    let c = open(&opts(&scope, "nobody", r#"{"ttlSeconds":60}"#));
    let key = c.key();
    assert_eq!(key.len(), 36);
    assert_eq!(&key[14..15], "4", "UUID v4: {key}");
    assert!(matches!(&key[19..20], "8" | "9" | "a" | "b"), "UUID variant: {key}");
    assert_eq!(c.scope(), scope);
    assert_eq!(c.state(), "fresh");
    assert_eq!(c.attempts(), 0);
    assert_eq!(c.storage(), "local");
    assert_eq!(c.expires_at() - c.created_at(), 60_000.0);
    let stored = local().get_item(&record_key("idemkey", &scope)).unwrap().expect("record stored at open");
    assert_eq!(Record::decode(&stored).unwrap().key, key);
    // A refresh (a second open of the same scope) sees the same key and state.
    let again = open(&opts(&scope, "nobody", "{}"));
    assert_eq!(again.key(), key);
    assert_eq!(again.state(), "fresh");
    assert_eq!(again.created_at(), c.created_at());
    c.finish();
}

#[wasm_bindgen_test]
fn new_key_is_a_fresh_uuid_v4() {
    let (a, b) = (idemkey::new_key(), idemkey::new_key());
    assert_ne!(a, b);
    for k in [a, b] {
        assert!(idemkey::core::record::is_uuid(&k), "{k}");
        assert_eq!(&k[14..15], "4");
    }
}

#[wasm_bindgen_test]
fn reset_and_finish() {
    let scope = uniq("reset");
    let ev = recorder();
    let o = opts(&scope, "nobody", "{}");
    set(&o, "onEvent", &ev);
    let c = open(&o);
    let k1 = c.key();
    c.reset();
    let k2 = c.key();
    assert_ne!(k1, k2);
    assert_eq!(c.state(), "fresh");
    let rk = record_key("idemkey", &scope);
    assert_eq!(Record::decode(&local().get_item(&rk).unwrap().unwrap()).unwrap().key, k2);
    c.finish();
    assert_eq!(local().get_item(&rk).unwrap(), None, "finish forgets the record");
    assert_ne!(c.key(), k2);
    assert_eq!(c.state(), "fresh");
    assert_ne!(open(&opts(&scope, "nobody", "{}")).key(), k2);
    local().remove_item(&rk).unwrap();
}

#[wasm_bindgen_test]
fn memory_storage_stays_out_of_web_storage_and_is_shared_in_the_page() {
    let scope = uniq("mem");
    let c = open(&opts(&scope, "nobody", r#"{"storage":"memory"}"#));
    assert_eq!(c.storage(), "memory");
    assert_eq!(local().get_item(&record_key("idemkey", &scope)).unwrap(), None);
    assert_eq!(open(&opts(&scope, "nobody", r#"{"storage":"memory"}"#)).key(), c.key());
    c.finish();
}

#[wasm_bindgen_test]
fn local_storage_that_throws_falls_back_to_session() {
    let scope = uniq("fb-session");
    let ev = recorder();
    let o = opts(&scope, "nobody", "{}");
    set(&o, "onEvent", &ev);
    let undo = break_storage(false);
    let c = Checkout::open(o);
    restore(&undo);
    let c = c.expect("open survives throwing storage");
    assert_eq!(c.storage(), "session");
    let fb = events_of(&ev, "storage-fallback");
    assert_eq!(fb.len(), 1);
    assert_eq!(get(&fb[0], "from").as_string().unwrap(), "local");
    assert_eq!(get(&fb[0], "to").as_string().unwrap(), "session");
    assert!(get(&fb[0], "reason").as_string().unwrap().contains("QuotaExceededError"));
    assert_eq!(get(&fb[0], "key").as_string().unwrap(), c.key());
    let session = web_sys::window().unwrap().session_storage().unwrap().unwrap();
    let rk = record_key("idemkey", &scope);
    assert!(session.get_item(&rk).unwrap().is_some(), "record in sessionStorage");
    assert_eq!(local().get_item(&rk).unwrap(), None);
    session.remove_item(&rk).unwrap();
}

#[wasm_bindgen_test]
fn storage_that_always_throws_falls_back_to_memory() {
    let scope = uniq("fb-mem");
    let ev = recorder();
    let o = opts(&scope, "nobody", "{}");
    set(&o, "onEvent", &ev);
    let undo = break_storage(true);
    let c = Checkout::open(o.clone());
    let again = Checkout::open(o);
    restore(&undo);
    let (c, again) = (c.unwrap(), again.unwrap());
    assert_eq!(c.storage(), "memory");
    let hops: Vec<(String, String)> = events_of(&ev, "storage-fallback")
        .iter()
        .map(|e| (get(e, "from").as_string().unwrap(), get(e, "to").as_string().unwrap()))
        .collect();
    assert_eq!(hops[..2], [("local".into(), "session".into()), ("session".into(), "memory".into())]);
    // The memory record is page-wide: a refresh-like second open finds the same key.
    assert_eq!(again.key(), c.key());
    c.finish();
}

#[wasm_bindgen_test]
fn a_write_that_throws_later_falls_back_too() {
    let scope = uniq("fb-later");
    let ev = recorder();
    let o = opts(&scope, "nobody", "{}");
    set(&o, "onEvent", &ev);
    let c = open(&o);
    assert_eq!(c.storage(), "local");
    let undo = break_storage(false);
    c.reset();
    restore(&undo);
    assert_eq!(c.storage(), "session");
    let fb = events_of(&ev, "storage-fallback");
    assert_eq!(fb.len(), 1);
    assert_eq!(get(&fb[0], "key").as_string().unwrap(), c.key());
    let session = web_sys::window().unwrap().session_storage().unwrap().unwrap();
    let rk = record_key("idemkey", &scope);
    assert_eq!(Record::decode(&session.get_item(&rk).unwrap().unwrap()).unwrap().key, c.key());
    assert_eq!(local().get_item(&rk).unwrap(), None, "the stale local copy is dropped");
    session.remove_item(&rk).unwrap();
}

fn quarantined(ns: &str, scope: &str) -> Vec<(String, String)> {
    let s = local();
    let prefix = format!("{ns}:corrupt:{scope}:");
    (0..s.length().unwrap())
        .filter_map(|i| s.key(i).unwrap())
        .filter(|k| k.starts_with(&prefix))
        .map(|k| {
            let v = s.get_item(&k).unwrap().unwrap();
            (k, v)
        })
        .collect()
}

#[wasm_bindgen_test]
fn corrupt_records_are_set_aside_with_an_event() {
    let ns = uniq("ns").replace('-', "");
    let ns = &ns[..20];
    for (i, garbage) in ["{not json", r#"{"v":2,"key":"x"}"#, "null", ""].iter().enumerate() {
        let scope = format!("corrupt-{i}");
        let rk = record_key(ns, &scope);
        local().set_item(&rk, garbage).unwrap();
        let ev = recorder();
        let o = opts(&scope, "nobody", &format!(r#"{{"namespace":"{ns}"}}"#));
        set(&o, "onEvent", &ev);
        let c = open(&o);
        assert_eq!(c.state(), "fresh");
        let bad = events_of(&ev, "storage-corrupt");
        assert_eq!(bad.len(), 1, "one storage-corrupt event for {garbage:?}");
        assert_eq!(get(&bad[0], "key").as_string().unwrap(), c.key());
        let q = quarantined(ns, &scope);
        assert_eq!(q.len(), 1);
        assert_eq!(q[0].1, *garbage, "the unreadable text is kept aside");
        assert_eq!(get(&bad[0], "quarantineKey").as_string().unwrap(), q[0].0);
        assert_eq!(Record::decode(&local().get_item(&rk).unwrap().unwrap()).unwrap().key, c.key());
        local().remove_item(&q[0].0).unwrap();
        c.finish();
    }
}

#[wasm_bindgen_test]
fn a_throwing_on_event_never_breaks_open() {
    let scope = uniq("thrower");
    let rk = record_key("idemkey", &scope);
    local().set_item(&rk, "garbage").unwrap();
    let o = opts(&scope, "nobody", "{}");
    set(&o, "onEvent", &thrower());
    let c = open(&o);
    assert_eq!(c.state(), "fresh");
    for (k, _) in quarantined("idemkey", &scope) {
        local().remove_item(&k).unwrap();
    }
    c.finish();
}

fn stored(scope: &str, now: f64, ttl_ms: f64, state: State) -> Record {
    let mut r = Record::new(idemkey::new_key(), scope, now, ttl_ms);
    r.state = state;
    if state != State::Fresh {
        r.fingerprint = Some("f1:0000000000000000".into());
        r.attempts = 1;
    }
    if state == State::Succeeded {
        r.response = Some(StoredResponse { status: 201, body: "{}".into(), replayed: false });
    }
    r
}

#[wasm_bindgen_test]
fn an_expired_record_gets_a_new_key() {
    let scope = uniq("expired");
    let now = js_sys::Date::now();
    let old = stored(&scope, now - 10_000.0, 5_000.0, State::Succeeded);
    local().set_item(&record_key("idemkey", &scope), &old.encode()).unwrap();
    let c = open(&opts(&scope, "nobody", "{}"));
    assert_ne!(c.key(), old.key);
    assert_eq!(c.state(), "fresh");
    c.finish();
}

#[wasm_bindgen_test]
async fn a_key_older_than_ttl_seconds_is_not_reused() {
    let scope = uniq("ttl");
    let c = open(&opts(&scope, "nobody", r#"{"ttlSeconds":1}"#));
    let k = c.key();
    assert_eq!(open(&opts(&scope, "nobody", r#"{"ttlSeconds":1}"#)).key(), k);
    sleep(1100).await;
    let later = open(&opts(&scope, "nobody", r#"{"ttlSeconds":1}"#));
    assert_ne!(later.key(), k);
    later.finish();
}

#[wasm_bindgen_test]
fn sweep_removes_expired_records_only() {
    let ns = &uniq("sw").replace('-', "")[..16];
    let now = js_sys::Date::now();
    let s = local();
    let put = |scope: &str, text: &str| s.set_item(&record_key(ns, scope), text).unwrap();
    put("old-1", &stored("old-1", now - 10_000.0, 1_000.0, State::Pending).encode());
    put("old-2", &stored("old-2", now - 10_000.0, 1_000.0, State::Fresh).encode());
    put("live", &stored("live", now, 60_000.0, State::Succeeded).encode());
    put("junk", "not a record");
    let other = format!("{ns}x");
    s.set_item(&record_key(&other, "old"), &stored("old", now - 10_000.0, 1.0, State::Fresh).encode())
        .unwrap();
    assert_eq!(sweep(Some(ns.to_string())).unwrap(), 2);
    assert_eq!(s.get_item(&record_key(ns, "old-1")).unwrap(), None);
    assert_eq!(s.get_item(&record_key(ns, "old-2")).unwrap(), None);
    assert!(s.get_item(&record_key(ns, "live")).unwrap().is_some());
    assert!(s.get_item(&record_key(ns, "junk")).unwrap().is_some());
    assert!(s.get_item(&record_key(&other, "old")).unwrap().is_some(), "other namespaces untouched");
    assert_eq!(sweep(Some(ns.to_string())).unwrap(), 0);
    for k in [record_key(ns, "live"), record_key(ns, "junk"), record_key(&other, "old")] {
        s.remove_item(&k).unwrap();
    }
    assert!(sweep(Some("a:b".into())).is_err());
}

#[wasm_bindgen_test]
fn the_storage_event_keeps_state_current() {
    let scope = uniq("tabs");
    let ev = recorder();
    let o = opts(&scope, "nobody", "{}");
    set(&o, "onEvent", &ev);
    let c = open(&o);
    let rk = record_key("idemkey", &scope);
    // Another tab takes the attempt to succeeded under a key of its own.
    let theirs = stored(&scope, js_sys::Date::now(), 60_000.0, State::Succeeded);
    local().set_item(&rk, &theirs.encode()).unwrap();
    fire_storage(&rk, Some(theirs.encode()));
    assert_eq!(c.state(), "succeeded");
    assert_eq!(c.key(), theirs.key);
    assert_eq!(c.attempts(), 1);
    let st = events_of(&ev, "state");
    assert_eq!(st.len(), 1);
    assert_eq!(get(&st[0], "state").as_string().unwrap(), "succeeded");
    assert_eq!(get(&st[0], "previous").as_string().unwrap(), "fresh");
    // Events for other keys are ignored.
    fire_storage(&record_key("idemkey", "another-scope"), Some("junk".into()));
    assert_eq!(c.state(), "succeeded");
    // The other tab calls finish(): the next attempt here gets a new key.
    local().remove_item(&rk).unwrap();
    fire_storage(&rk, None);
    assert_eq!(c.state(), "fresh");
    assert_ne!(c.key(), theirs.key);
}

#[wasm_bindgen_test]
async fn a_payload_json_cannot_carry_is_rejected() {
    let c = open(&opts(&uniq("payload"), "nobody", "{}"));
    let e = submit(&c, &JsValue::UNDEFINED).await.unwrap_err();
    assert_idem_error(&e, "invalid-payload", "payload");
    let e = submit(&c, &js_sys::BigInt::from(5u32).into()).await.unwrap_err();
    assert_idem_error(&e, "invalid-payload", "payload");
    assert_eq!(c.state(), "fresh");
    assert_eq!(c.attempts(), 0);
    c.finish();
}
