//! Browser tests with the browser's own storage broken on purpose by page JS: storage that
//! throws on every call, only on writes, only on reads, or only after N writes; a quota
//! exceeded in the middle of a submit; a record edited by hand between two tries; a record
//! from a future version; IndexedDB missing, failing to open or to run a transaction, or
//! out of quota. Each ends in a defined state with an event, against the real reference
//! server, and no key whose outcome is unknown is ever silently given up.
#![cfg(target_arch = "wasm32")]

mod support;

use idemkey::core::record::Record;
use idemkey::Checkout;
use js_sys::Function;
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/support/page.js")]
extern "C" {
    /// Undoes every patch below, and `hide_indexed_db` and `break_indexed_db` of this page
    /// (also run first by each test, so one failure stays local).
    fn repair();
    /// `window.localStorage` and `sessionStorage` throw SecurityError when touched.
    #[wasm_bindgen(js_name = denyAccess)]
    fn deny_access();
    /// Every Storage method and `length` throw SecurityError.
    #[wasm_bindgen(js_name = throwOnEveryCall)]
    fn throw_on_every_call();
    /// `setItem` throws QuotaExceededError everywhere; reads work.
    #[wasm_bindgen(js_name = throwOnWrites)]
    fn throw_on_writes();
    /// `localStorage.getItem` throws; writes work.
    #[wasm_bindgen(js_name = throwOnLocalReads)]
    fn throw_on_local_reads();
    /// `localStorage.setItem` works `n` more times, then throws QuotaExceededError.
    #[wasm_bindgen(js_name = throwAfterLocalWrites)]
    fn throw_after_local_writes(n: u32);
    /// `localStorage.setItem` throws QuotaExceededError for values longer than `max`.
    #[wasm_bindgen(js_name = quotaForLocalValues)]
    fn quota_for_local_values(max: u32);
    /// `indexedDB.open` throws UnknownError ("test: no open").
    #[wasm_bindgen(js_name = failIdbOpen)]
    fn fail_idb_open();
    /// Every IndexedDB `put` throws QuotaExceededError.
    #[wasm_bindgen(js_name = quotaOnIdbPut)]
    fn quota_on_idb_put();
    /// An `onEvent` that passes events to `recorder` and, at the first `retry` event,
    /// replaces the localStorage value of `storage_key` with `edit(old value)`.
    #[wasm_bindgen(js_name = editOnFirstRetry)]
    fn edit_on_first_retry(recorder: &Function, storage_key: &str, edit: &Function) -> Function;
}

/// The `storage-fallback` events, each as `"from -> to"`.
fn fallbacks(ev: &Function) -> Vec<String> {
    let fb = events_of(ev, "storage-fallback");
    fb.iter()
        .map(|e| format!("{} -> {}", text(e, "from"), text(e, "to")))
        .collect()
}

/// The one `storage-fallback` event from IndexedDB, as `(to, reason)`.
fn the_idb_fallback(ev: &Function) -> (String, String) {
    let fb: Vec<_> = events_of(ev, "storage-fallback")
        .iter()
        .filter(|e| text(e, "from") == "indexeddb")
        .map(|e| (text(e, "to"), text(e, "reason")))
        .collect();
    assert_eq!(fb.len(), 1, "{:?}", types(ev));
    fb[0].clone()
}

/// A fault spec: the server answers the next charge with a 503.
const ONE_503: &str = r#"{"mode":"respond","status":503,"count":1}"#;

/// A new [`Case`] on the page's storage repaired first (so one failure stays local).
fn case(what: &str) -> Case {
    repair();
    Case::new(what)
}

/// A reload of the page (a checkout for `t` with default options), which must find the
/// attempt `k` succeeded, else panics with `why`.
fn reload_finds_succeeded(t: &Case, k: &str, why: &str) -> Checkout {
    let again = open(&opts(&t.scope, &t.customer, "{}"));
    let found = (again.key(), again.state());
    assert_eq!(found, (k.to_string(), "succeeded".into()), "{why}");
    again
}

/// A first submit of [`PAY`] for `t` that ended with an unknown outcome after the server
/// committed the charge (the answer was dropped): the record is pending under the returned
/// key, and the ledger holds that key's one charge.
async fn unknown_outcome(t: &Case) -> String {
    let c = open(&opts(&t.scope, &t.customer, r#"{"maxRetries":0}"#));
    fault(&t.customer, "drop-after-commit", 1, 0).await;
    let e = pay(&c).await.expect_err("the answer was dropped");
    assert_idem_error(&e, "outcome-unknown", "");
    assert_eq!(c.state(), "pending");
    assert_eq!(t.ledger().await, vec![c.key()], "committed once");
    c.key()
}

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
        assert!(idemkey::sweep(None).is_ok(), "sweep survives");
        repair();
        assert_eq!(t.ledger().await, vec![c.key()]);
        c.finish();
    }
}

#[wasm_bindgen_test]
async fn storage_that_throws_only_on_writes_keeps_the_pending_key() {
    let t = case("ro");
    let k = unknown_outcome(&t).await;
    // The page reloads with storage now refusing writes (a full disk): the record is
    // still readable, and its key's outcome is unknown.
    throw_on_writes();
    let (o, ev) = t.opts("{}");
    let c = Checkout::open(o).expect("open survives");
    let key = c.key();
    let r = pay(&c).await;
    repair();
    assert!(!fallbacks(&ev).is_empty(), "a storage-fallback event");
    assert_eq!(key, k, "the pending key was given up: {:?}", types(&ev));
    let r = r.expect("the resumed submit gets the stored answer");
    assert_eq!(num(&r, "status"), 201.0);
    assert!(flag(&r, "replayed"));
    assert_eq!(t.ledger().await, vec![k], "charged once");
    c.finish();
}

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

#[wasm_bindgen_test]
async fn quota_exceeded_in_the_middle_of_a_submit_keeps_the_key_after_a_reload() {
    let t = case("quota-mid");
    let (c, ev) = t.open(FAST);
    t.wait_stored().await;
    schedule(&t.customer, ONE_503).await;
    // The pending write before the first try lands; the one before the second does not.
    throw_after_local_writes(1);
    let r = pay(&c).await;
    repair();
    let r = r.expect("the submit goes on in sessionStorage");
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(c.storage(), "session");
    assert_eq!(fallbacks(&ev), ["local -> session"]);
    assert_eq!(t.ledger().await, vec![c.key()]);
    // A reload once localStorage has room again: the attempt is not forgotten.
    let again = reload_finds_succeeded(&t, &c.key(), "the reload lost the succeeded attempt");
    let cached = pay(&again).await.unwrap();
    assert!(flag(&cached, "fromCache"));
    assert_eq!(t.ledger().await.len(), 1, "charged once");
    session().remove_item(&t.key()).unwrap();
    again.finish();
}

#[wasm_bindgen_test]
async fn quota_exceeded_by_a_large_answer_keeps_the_answer() {
    let t = case("quota-big");
    let (c, ev) = t.open("{}");
    let big = "x".repeat(8 * 1024);
    schedule(
        &t.customer,
        &format!(r#"{{"mode":"respond","status":200,"body":"{big}","content_type":"text/plain"}}"#),
    )
    .await;
    quota_for_local_values(4 * 1024);
    let r = pay(&c).await;
    repair();
    let r = r.expect("resolves with the answer");
    assert_eq!(num(&r, "status"), 200.0);
    assert_eq!(c.state(), "succeeded");
    assert_eq!(fallbacks(&ev), ["local -> session"]);
    let why = "the reload lost the answer stored in sessionStorage";
    let again = reload_finds_succeeded(&t, &c.key(), why);
    session().remove_item(&t.key()).unwrap();
    again.finish();
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

#[wasm_bindgen_test]
async fn a_record_from_the_future_is_set_aside_not_resumed_or_lost() {
    let t = case("future");
    let rk = t.key();
    let now = js_sys::Date::now();
    let mut r = Record::new(idemkey::new_key(), t.scope.as_str(), now, 60_000.0);
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

/// After IndexedDB came back (empty, or holding an older copy): a reload finds the attempt
/// that succeeded while it was gone, and a submit of the same payload sends nothing.
async fn after_indexeddb_is_back(t: &Case, k: &str) {
    repair();
    let again = reload_finds_succeeded(t, k, "the reload lost what succeeded without IndexedDB");
    let r = pay(&again).await.unwrap();
    assert_eq!(text(&r, "key"), k, "a new key once IndexedDB came back");
    assert!(
        flag(&r, "fromCache"),
        "sent again once IndexedDB came back: {r:?}"
    );
    assert_eq!(t.ledger().await, vec![k.to_string()], "charged once");
    again.finish();
}

#[wasm_bindgen_test]
async fn indexeddb_unavailable_keeps_the_pending_key_in_local_storage() {
    let t = case("no-idb");
    hide_indexed_db(&JsValue::UNDEFINED);
    let k = unknown_outcome(&t).await;
    // A reload, still without IndexedDB: the key whose outcome is unknown is resumed.
    let (c, ev) = t.open("{}");
    assert_eq!(c.key(), k);
    let r = pay(&c).await;
    let (to, reason) = the_idb_fallback(&ev);
    assert_eq!(to, "local");
    assert!(reason.contains("IndexedDB unavailable"), "{reason}");
    let r = r.expect("the resumed submit gets the stored answer");
    assert_eq!((text(&r, "key"), num(&r, "status")), (k.clone(), 201.0));
    assert!(flag(&r, "replayed"));
    after_indexeddb_is_back(&t, &k).await;
}

#[wasm_bindgen_test]
async fn indexeddb_that_fails_to_open_or_to_run_a_transaction_keeps_the_pending_key() {
    let t = case("idb-fails");
    // IndexedDB holds the pending record, then starts failing.
    let k = unknown_outcome(&t).await;
    break_indexed_db(&JsValue::UNDEFINED);
    fail_idb_open();
    let (c, ev) = t.open("{}");
    assert_eq!(c.key(), k);
    let r = pay(&c).await;
    let (_, reason) = the_idb_fallback(&ev);
    // The transaction of open()'s sweep may have failed first, and the connection with it.
    assert!(
        ["no transactions", "no open"]
            .iter()
            .any(|e| reason.contains(e)),
        "{reason}"
    );
    let r = r.expect("the resumed submit gets the stored answer");
    assert_eq!((text(&r, "key"), num(&r, "status")), (k.clone(), 201.0));
    // Once the connection is gone, reopening it fails as well.
    let (again, ev) = t.open("{}");
    let cached = pay(&again).await.unwrap();
    assert!(flag(&cached, "fromCache"));
    let (_, reason) = the_idb_fallback(&ev);
    assert!(reason.contains("no open"), "{reason}");
    // IndexedDB comes back with its older copy (pending) of the attempt.
    after_indexeddb_is_back(&t, &k).await;
}

#[wasm_bindgen_test]
async fn indexeddb_out_of_quota_in_the_middle_of_a_submit_keeps_the_answer() {
    for from_the_start in [false, true] {
        let t = case("idb-quota");
        let (o, ev) = t.opts(FAST);
        if from_the_start {
            quota_on_idb_put();
        }
        let c = open(&o);
        t.wait_stored().await;
        schedule(&t.customer, ONE_503).await;
        quota_on_idb_put();
        let r = pay(&c).await;
        let (to, reason) = the_idb_fallback(&ev);
        assert_eq!(to, "local");
        assert!(reason.contains("QuotaExceededError"), "{reason}");
        let r = r.expect("the submit goes on in localStorage");
        assert_eq!(num(&r, "status"), 201.0);
        assert_eq!((num(&r, "attempts"), c.state()), (2.0, "succeeded".into()));
        after_indexeddb_is_back(&t, &c.key()).await;
    }
}

#[wasm_bindgen_test]
async fn storage_that_throws_only_on_reads_resumes_the_pending_key_indexeddb_holds() {
    let t = case("ro-idb");
    let k = unknown_outcome(&t).await;
    // The page reloads and its localStorage now throws on reads: the pending record is
    // still in IndexedDB, where every tab of the origin reads it.
    throw_on_local_reads();
    let (c, ev) = t.open("{}");
    let r = pay(&c).await;
    repair();
    let r = r.expect("the submit goes on");
    assert_eq!(text(&r, "key"), k, "a new key was sent: {:?}", types(&ev));
    assert_eq!(t.ledger().await, vec![k], "charged once");
    c.finish();
}
