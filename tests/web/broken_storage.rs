//! Browser tests with the browser's Web Storage broken on purpose by page JS: storage that
//! throws on every call, only on writes, only on reads, or only after N writes; a quota
//! exceeded in the middle of a submit; a record edited by hand between two tries; a record
//! from a future version. Each ends in a defined state with an event, against the real
//! reference server, and no key whose outcome is unknown is ever silently given up.

use crate::support::*;
use idemkey::core::record::Record;
use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

// P-storage-fallback-order: storage that throws on every call: local -> session -> memory
#[wasm_bindgen_test]
async fn storage_that_throws_on_every_call_runs_in_memory() {
    for deny in [false, true] {
        let t = case("all-throw");
        let (o, ev) = t.opts("{}");
        if deny {
            deny_access();
        } else {
            throw_on_every_call();
        }
        let c = Checkout::open(o.clone()).expect("open survives");
        assert_eq!(c.storage(), "memory");
        assert_eq!(fallbacks(&ev), ["local -> session", "session -> memory"]);
        let r = pay(&c).await.expect("submit works in memory");
        assert_eq!((num(&r, "status"), c.state()), (201.0, "succeeded".into()));
        // A second checkout of the page (a re-render) finds the same attempt in memory.
        let again = Checkout::open(o).unwrap();
        assert_eq!(again.key(), c.key());
        let cached = pay(&again).await.unwrap();
        assert!(flag(&cached, "fromCache"));
        repair();
        assert_eq!(t.ledger().await, vec![c.key()]);
        c.finish();
    }
}

// P-open-finds-fallen-back: a localStorage that reads but takes no writes gives its pending key back
// P-fallback-copy-only: the record stays shared and kept across a reload when localStorage fails
#[wasm_bindgen_test]
async fn storage_that_throws_only_on_writes_keeps_the_pending_key() {
    let t = case("ro");
    let k = unknown_outcome(&t).await;
    // The page reloads (a new page) with storage now refusing writes (a full disk): the
    // record is still readable, and its key's outcome is unknown.
    let page = Tab::open().await;
    throw_on_writes_in(&page.window());
    let (c, ev) = page.checkout_recorded(&opts(&t.scope, &t.customer, "{}"));
    let c = TabCheckout(c);
    let key = c.key();
    let r = c.submit(&js(PAY)).await;
    assert!(!fallbacks(&ev).is_empty(), "a storage-fallback event");
    assert_eq!(key, k, "the pending key was given up: {:?}", types(&ev));
    assert_eq!(
        num(&r, "status"),
        201.0,
        "the resumed submit gets the stored answer: {r:?}"
    );
    assert!(flag(&r, "replayed"));
    assert_eq!(t.ledger().await, vec![k], "charged once");
    c.finish();
    page.close();
}

// P-unreadable-never-overwritten: a localStorage that throws on reads is never written over
#[wasm_bindgen_test]
async fn storage_that_throws_only_on_reads_never_overwrites_what_it_could_not_read() {
    let t = case("wo");
    let k = unknown_outcome(&t).await;
    throw_on_local_reads();
    let (o, ev) = t.opts("{}");
    let c = Checkout::open(o);
    repair();
    let c = c.expect("open survives");
    assert!(
        !fallbacks(&ev).is_empty() || c.key() == k,
        "unreadable storage is neither reported nor read: {:?}",
        types(&ev)
    );
    assert_eq!(
        t.stored().map(|r| r.key),
        Some(k.clone()),
        "the pending record it could not read was overwritten"
    );
    c.finish();
}

// P-fallback-idb-found: the pending key IndexedDB holds is found and resent
#[wasm_bindgen_test]
async fn storage_that_throws_only_on_reads_resumes_the_pending_key_indexeddb_holds() {
    let t = case("ro-idb");
    let k = unknown_outcome(&t).await;
    // The page reloads (a new page) and its localStorage now throws on reads: the pending
    // record is still in IndexedDB, where every tab of the origin reads it.
    let page = Tab::open().await;
    throw_on_local_reads_in(&page.window());
    let (c, ev) = page.checkout_recorded(&opts(&t.scope, &t.customer, "{}"));
    let c = TabCheckout(c);
    let r = c.submit(&js(PAY)).await;
    assert_eq!(num(&r, "status"), 201.0, "the submit goes on: {r:?}");
    assert_eq!(text(&r, "key"), k, "a new key was sent: {:?}", types(&ev));
    assert_eq!(t.ledger().await, vec![k], "charged once");
    c.finish();
    page.close();
}

// P-storage-fallback-order: a quota hit between two tries moves the record to sessionStorage
// P-open-finds-fallen-back: a reload finds the record in sessionStorage; after finish() a later page pays anew
#[wasm_bindgen_test]
async fn quota_exceeded_in_the_middle_of_a_submit_keeps_the_key_after_a_reload() {
    let t = case("quota-mid");
    let (c, ev) = t.open(FAST);
    schedule(&t.customer, ONE_503).await;
    // The pending write before the first try lands; the one before the second does not.
    throw_after_local_writes(1);
    let r = pay(&c).await;
    repair();
    let r = r.expect("the submit goes on in sessionStorage");
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(c.storage(), "session");
    assert_eq!(fallbacks(&ev), ["local -> session"]);
    let key = c.key();
    assert_eq!(t.ledger().await, vec![key.clone()]);
    // A reload once localStorage has room again (a new page, the old one gone): the
    // attempt is not forgotten.
    drop(c);
    let why = "the reload lost the succeeded attempt";
    let (page, again) = reload_finds_succeeded(&t, &key, why).await;
    let cached = again.submit(&js(PAY)).await;
    assert!(flag(&cached, "fromCache"), "{cached:?}");
    assert_eq!(t.ledger().await.len(), 1, "charged once");
    // finish() ends the attempt wherever a fallback left its record: a later page shows a
    // new key and pays the same basket under it.
    again.finish();
    page.close();
    let later = Tab::open().await;
    let next = later.open_checkout(&opts(&t.scope, &t.customer, "{}"));
    next.pays_anew(&key).await;
    assert_eq!(t.ledger().await.len(), 2, "the next order was not charged");
    next.finish();
    later.close();
}

// P-storage-fallback-order: an answer too large to store moves the record to sessionStorage
// P-open-finds-fallen-back: a reload finds the answer in sessionStorage
#[wasm_bindgen_test]
async fn quota_exceeded_by_a_large_answer_keeps_the_answer() {
    let t = case("quota-big");
    let (c, ev) = t.open("{}");
    schedule_large_answer(&t.customer).await;
    quota_for_local_values(4 * 1024);
    let r = pay(&c).await;
    repair();
    let r = r.expect("resolves with the answer");
    assert_eq!(num(&r, "status"), 200.0);
    assert_eq!(c.state(), "succeeded");
    assert_eq!(fallbacks(&ev), ["local -> session"]);
    let (why, key) = (
        "the reload lost the answer stored in sessionStorage",
        c.key(),
    );
    drop(c);
    let (page, again) = reload_finds_succeeded(&t, &key, why).await;
    session().remove_item(&t.key()).unwrap();
    again.finish();
    page.close();
}

/// Submits [`PAY`] with a 503 first and `edit` applied to the stored record between the
/// two tries; checks that the submit still ends in one 201 charge under the checkout's key,
/// and returns the case, the checkout, its events and the answer.
async fn edited_between_tries(edit: &str) -> (Case, Checkout, Function, JsValue) {
    let t = case("edited");
    let ev = recorder();
    let o = opts(&t.scope, &t.customer, FAST);
    let f = Function::new_with_args("old", edit);
    set(&o, "onEvent", &edit_on_first_retry(&ev, &t.key(), &f));
    let c = open(&o);
    schedule(&t.customer, ONE_503).await;
    let r = pay(&c).await.expect("the submit finishes");
    let k = c.key();
    assert_eq!(
        (text(&r, "key"), num(&r, "status")),
        (k.clone(), 201.0),
        "{edit}"
    );
    assert_eq!(t.ledger().await, vec![k], "one charge, the key's");
    (t, c, ev, r)
}

#[wasm_bindgen_test]
async fn a_record_edited_by_hand_between_two_tries_keeps_the_key() {
    for edit in [
        // Another key, already "succeeded": a forged success must not end the attempt.
        r#"const r = JSON.parse(old); r.key = "00000000-0000-4000-8000-000000000000";
           r.state = "succeeded"; r.response = {status: 201, body: "{}", replayed: false};
           return JSON.stringify(r);"#,
        // Back to fresh with no attempts: the key stays bound to its payload.
        r#"const r = JSON.parse(old); r.state = "fresh"; r.attempts = 0; r.fp = null;
           return JSON.stringify(r);"#,
    ] {
        let (t, c, ev, r) = edited_between_tries(edit).await;
        assert_eq!(num(&r, "attempts"), 2.0);
        assert_eq!(types(&ev).iter().filter(|t| *t == "attempt").count(), 2);
        let s = t.stored().unwrap();
        assert_eq!((s.key, s.state.as_str()), (c.key(), "succeeded"), "{edit}");
        c.finish();
    }
}

// P-corrupt-set-aside: unreadable in the way of the write before a try: set aside, the running submit keeps its key
// P-event-storage-corrupt: a storage-corrupt event whose quarantineKey holds the text
#[wasm_bindgen_test]
async fn a_record_made_unreadable_between_two_tries_is_set_aside_with_an_event() {
    for edit in [
        r#"return "{not json";"#,
        r#"return old.replace('"v":1', '"v":99');"#,
    ] {
        let (t, c, ev, _) = edited_between_tries(edit).await;
        assert_eq!(t.stored().unwrap().key, c.key());
        let bad = events_of(&ev, "storage-corrupt");
        assert_eq!(bad.len(), 1, "{edit}: events {:?}", types(&ev));
        let q = text(&bad[0], "quarantineKey");
        assert!(
            local().get_item(&q).unwrap().is_some(),
            "the text is kept aside"
        );
        local().remove_item(&q).unwrap();
        c.finish();
    }
}

// P-corrupt-set-aside: a record of another version is set aside, not resumed; a new key
#[wasm_bindgen_test]
async fn a_record_from_the_future_is_set_aside_not_resumed_or_lost() {
    let t = case("future");
    let rk = t.key();
    let now = js_sys::Date::now();
    let mut r = Record::new(new_key(), t.scope.as_str(), now, 60_000.0);
    r.state = idemkey::core::state::State::Pending;
    r.fingerprint = Some("f1:0000000000000000".into());
    r.attempts = 1;
    let future = r
        .encode()
        .replacen("{\"v\":1,", "{\"v\":99,\"extra\":[1,2],", 1);
    local().set_item(&rk, &future).unwrap();
    let (c, ev) = t.open("{}");
    assert_eq!(c.state(), "fresh");
    assert_ne!(c.key(), r.key);
    let bad = events_of(&ev, "storage-corrupt");
    assert_eq!(bad.len(), 1);
    assert!(text(&bad[0], "reason").contains("unsupported version"));
    let q = text(&bad[0], "quarantineKey");
    assert_eq!(
        local().get_item(&q).unwrap().as_deref(),
        Some(future.as_str())
    );
    // The same record arriving from another tab later is ignored, not adopted.
    fire_storage(&rk, Some(future.clone()));
    assert_eq!(c.state(), "fresh");
    let r = pay(&c).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    local().remove_item(&q).unwrap();
    c.finish();
}
