//! Browser tests of the records in storage (no server needed): fallback when storage
//! throws, corrupt records set aside, expiry and sweep. The cross-tab `storage` event is in
//! tabs.rs.

use crate::support::*;
use idemkey::core::record::{quarantine_key, Record};
use idemkey::core::state::State;
use wasm_bindgen_test::*;

// P-storage-fallback-order: a throwing localStorage moves the record to sessionStorage; checkout.storage says so
// P-event-storage-fallback: a storage-fallback event with from, to, reason and the key
#[wasm_bindgen_test]
async fn local_storage_that_throws_falls_back_to_session() {
    let scope = uniq("fb-session");
    let (o, ev) = recorded_opts(&scope, "nobody", "{}");
    let undo = break_storage(false);
    let c = Checkout::open(o);
    let c = c.expect("open survives throwing storage");
    // open() found no record, so it wrote nothing and found nothing out.
    assert_eq!(c.storage(), "local");
    assert!(events_of(&ev, "storage-fallback").is_empty());
    // reset() writes its mark before it returns: that write throws, the mark goes to
    // sessionStorage, and reset() says the end holds in this tab only.
    let durable = c.reset();
    restore(&undo);
    assert!(
        !durable,
        "reset() said an end sessionStorage holds is durable"
    );
    assert_eq!(c.storage(), "session");
    let fb = events_of(&ev, "storage-fallback");
    assert_eq!(fb.len(), 1);
    assert_eq!(get(&fb[0], "from").as_string().unwrap(), "local");
    assert_eq!(get(&fb[0], "to").as_string().unwrap(), "session");
    assert!(get(&fb[0], "reason")
        .as_string()
        .unwrap()
        .contains("QuotaExceededError"));
    assert_eq!(get(&fb[0], "key").as_string().unwrap(), c.key());
    let session = web_sys::window()
        .unwrap()
        .session_storage()
        .unwrap()
        .unwrap();
    let rk = record_key("idemkey", &scope);
    // The key a submit stores (a declined card's: nothing charged) has its copy there too:
    // the record is still shared through IndexedDB, and only its copy moved.
    let r = submit(&c, &js(DECLINED)).await.unwrap();
    let stored = session
        .get_item(&rk)
        .unwrap()
        .map(|t| Record::decode(&t).unwrap().key);
    assert_eq!(stored, Some(text(&r, "key")), "record in sessionStorage");
    assert_eq!(local().get_item(&rk).unwrap(), None);
    c.finish();
    session.remove_item(&rk).unwrap();
}

// P-storage-fallback-order: storage that always throws: local -> session -> memory
#[wasm_bindgen_test]
async fn storage_that_always_throws_falls_back_to_memory() {
    let scope = uniq("fb-mem");
    let (o, ev) = recorded_opts(&scope, "nobody", "{}");
    let undo = break_storage(true);
    let c = Checkout::open(o.clone());
    let again = Checkout::open(o);
    let (c, again) = (c.unwrap(), again.unwrap());
    // reset() writes its mark before it returns: every backend refuses it but memory, and
    // reset() says the end holds in this page only.
    let durable = c.reset();
    restore(&undo);
    assert!(!durable, "reset() said an end page memory holds is durable");
    assert_eq!(c.storage(), "memory");
    assert_eq!(again.storage(), "memory");
    let mut hops: Vec<(String, String)> = events_of(&ev, "storage-fallback")
        .iter()
        .map(|e| {
            (
                get(e, "from").as_string().unwrap(),
                get(e, "to").as_string().unwrap(),
            )
        })
        .collect();
    // Each event reaches both checkouts' onEvent (one recorder here).
    hops.dedup();
    assert_eq!(
        hops,
        [
            ("local".into(), "session".into()),
            ("session".into(), "memory".into())
        ]
    );
    // The key reset() made is the page's: a second checkout of the scope shows it too.
    assert!(
        until(|| again.key() == c.key(), 5000.0).await,
        "two keys: {} and {}",
        c.key(),
        again.key()
    );
    c.finish();
}

// P-storage-fallback-order: a later write that throws moves the record too, with an event
#[wasm_bindgen_test]
async fn a_write_that_throws_later_falls_back_too() {
    let scope = uniq("fb-later");
    let (o, ev) = recorded_opts(&scope, "nobody", "{}");
    let c = open(&o);
    assert_eq!(c.storage(), "local");
    let undo = break_storage(false);
    // The first submit's write (its key, before the first byte goes out) throws: its copy
    // goes to sessionStorage (a declined card: nothing charged).
    let r = submit(&c, &js(DECLINED)).await;
    wait_events(&ev, "storage-fallback", 1).await;
    assert_eq!(num(&r.unwrap(), "status"), 402.0);
    let rk = record_key("idemkey", &scope);
    let in_session = || {
        let s = web_sys::window()
            .unwrap()
            .session_storage()
            .unwrap()
            .unwrap();
        s.get_item(&rk).unwrap().is_some()
    };
    assert!(
        until(in_session, 5000.0).await,
        "the record did not reach sessionStorage"
    );
    restore(&undo);
    assert_eq!(c.storage(), "session");
    let fb = events_of(&ev, "storage-fallback");
    assert_eq!(fb.len(), 1);
    assert_eq!(get(&fb[0], "key").as_string().unwrap(), c.key());
    let session = web_sys::window()
        .unwrap()
        .session_storage()
        .unwrap()
        .unwrap();
    assert_eq!(
        Record::decode(&session.get_item(&rk).unwrap().unwrap())
            .unwrap()
            .key,
        c.key()
    );
    assert_eq!(
        local().get_item(&rk).unwrap(),
        None,
        "the stale local copy is dropped"
    );
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

// P-corrupt-set-aside: an unreadable record at open() is moved aside, never overwritten; a new key
// P-event-storage-corrupt: a storage-corrupt event with reason, quarantineKey and the key
#[wasm_bindgen_test]
async fn corrupt_records_are_set_aside_with_an_event() {
    let ns = uniq("ns").replace('-', "");
    let ns = &ns[..20];
    for (i, garbage) in ["{not json", r#"{"v":2,"key":"x"}"#, "null", ""]
        .iter()
        .enumerate()
    {
        let scope = format!("corrupt-{i}");
        let rk = record_key(ns, &scope);
        local().set_item(&rk, garbage).unwrap();
        let (o, ev) = recorded_opts(&scope, "nobody", &format!(r#"{{"namespace":"{ns}"}}"#));
        let c = open(&o);
        assert_eq!(c.state(), "fresh");
        let bad = events_of(&ev, "storage-corrupt");
        assert_eq!(bad.len(), 1, "one storage-corrupt event for {garbage:?}");
        assert_eq!(get(&bad[0], "key").as_string().unwrap(), c.key());
        let q = quarantined(ns, &scope);
        assert_eq!(q.len(), 1);
        assert_eq!(q[0].1, *garbage, "the unreadable text is kept aside");
        assert_eq!(get(&bad[0], "quarantineKey").as_string().unwrap(), q[0].0);
        // Moved, not left in place; nothing is stored there before a submit.
        assert_eq!(local().get_item(&rk).unwrap(), None);
        local().remove_item(&q[0].0).unwrap();
        c.finish();
    }
}

// P-corrupt-set-aside: a stored record with any one field wrong is set aside, its text kept; a new key
#[wasm_bindgen_test]
fn a_record_with_one_field_wrong_is_set_aside() {
    // Each case changes one field of a record that, read as a record, would be shown: the
    // scope's own, succeeded and live.
    let good =
        |scope: &str| a_record(scope, js_sys::Date::now(), 3_600_000.0, State::Succeeded).encode();
    let wrong = |field: &'static str, to: &'static str| {
        move |good: String| {
            let at = good.find(&format!(r#""{field}":"#)).expect(field) + field.len() + 3;
            let end = if field == "response" {
                good.len() - 1
            } else {
                at + good[at..].find([',', '}']).unwrap()
            };
            format!("{}{to}{}", &good[..at], &good[end..])
        }
    };
    let whole = |to: &'static str| move |_: String| String::from(to);
    let cases: Vec<Box<dyn Fn(String) -> String>> = vec![
        Box::new(|good| good),
        Box::new(wrong("v", r#""1""#)),
        Box::new(wrong("v", "1.0e0x")),
        Box::new(wrong("key", "null")),
        Box::new(wrong("attempts", "1.5")),
        Box::new(wrong("attempts", r#""1""#)),
        Box::new(wrong("attempts", "-1")),
        Box::new(wrong("createdAt", "true")),
        Box::new(wrong("expiresAt", "9007199254740993")),
        Box::new(wrong("state", r#""paid""#)),
        Box::new(wrong("fp", "0")),
        Box::new(wrong("response", "[]")),
        Box::new(wrong(
            "response",
            r#"{"status":201,"body":"{}","replayed":"no"}"#,
        )),
        Box::new(wrong(
            "response",
            r#"{"status":99,"body":"{}","replayed":false}"#,
        )),
        Box::new(wrong(
            "response",
            r#"{"status":201,"body":{},"replayed":false}"#,
        )),
        Box::new(wrong("response", r#"{"body":"{}","replayed":false}"#)),
        Box::new(whole("[]")),
        Box::new(whole(r#""a record""#)),
        Box::new(whole("1")),
    ];
    for (i, case) in cases.iter().enumerate() {
        let scope = uniq(&format!("wrong{i}"));
        let rk = record_key("idemkey", &scope);
        let text = case(good(&scope));
        local().set_item(&rk, &text).unwrap();
        let (o, ev) = recorded_opts(&scope, "nobody", "{}");
        let c = open(&o);
        let corrupt = events_of(&ev, "storage-corrupt");
        if i == 0 {
            assert_eq!(
                c.state(),
                "succeeded",
                "the record the cases change is good"
            );
            assert!(corrupt.is_empty());
            c.finish();
            continue;
        }
        assert_eq!(c.state(), "fresh", "case {i} was read as a record: {text}");
        assert_eq!(corrupt.len(), 1, "case {i}: {text}");
        let q = quarantined("idemkey", &scope);
        assert_eq!(q.len(), 1, "case {i}");
        assert_eq!(q[0].1, text, "case {i}: the text is kept aside as it was");
        local().remove_item(&q[0].0).unwrap();
        c.finish();
    }
}

// P-on-event-throws: what onEvent throws never reaches open()
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
