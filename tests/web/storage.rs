//! Browser tests of the records in storage (no server needed): fallback when storage
//! throws, corrupt records set aside (their age and the sweep are in expiry.rs). The
//! cross-tab `storage` event is in tabs.rs.

use crate::support::*;
use idemkey::core::record::Record;
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
