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

fn fallbacks(ev: &Function) -> Vec<(String, String)> {
    events_of(ev, "storage-fallback")
        .iter()
        .map(|e| (text(e, "from"), text(e, "to")))
        .collect()
}

fn stored(scope: &str) -> Option<Record> {
    local()
        .get_item(&record_key("idemkey", scope))
        .unwrap()
        .map(|t| Record::decode(&t).expect("the stored record reads"))
}

fn session() -> web_sys::Storage {
    web_sys::window()
        .unwrap()
        .session_storage()
        .unwrap()
        .unwrap()
}

/// Waits until the key made at `open()` is stored (the lock holder does it in the
/// background); panics after 10 s.
async fn wait_stored(scope: &str) {
    assert!(
        until(|| stored(scope).is_some(), 10_000.0).await,
        "the new key was not stored within 10 s"
    );
}

/// The `storage-fallback` events from IndexedDB, as `(to, reason)`.
fn idb_fallbacks(ev: &Function) -> Vec<(String, String)> {
    events_of(ev, "storage-fallback")
        .iter()
        .filter(|e| text(e, "from") == "indexeddb")
        .map(|e| (text(e, "to"), text(e, "reason")))
        .collect()
}

/// A checkout on `scope` for `customer` whose first submit of [`PAY`] ended with an
/// unknown outcome after the server committed the charge (the answer was dropped): the
/// record is pending under its key, and the ledger holds that key's one charge.
async fn unknown_outcome(scope: &str, customer: &str) -> String {
    let c = open(&opts(scope, customer, r#"{"maxRetries":0}"#));
    fault(customer, "drop-after-commit", 1, 0).await;
    let e = submit(&c, &js(PAY))
        .await
        .expect_err("the answer was dropped");
    assert_idem_error(&e, "outcome-unknown", "");
    assert_eq!(c.state(), "pending");
    assert_eq!(ledger(customer).await, vec![c.key()], "committed once");
    c.key()
}

#[wasm_bindgen_test]
async fn storage_that_throws_on_every_call_runs_in_memory() {
    repair();
    for deny in [false, true] {
        let customer = uniq("cust");
        let scope = uniq("all-throw");
        let (o, ev) = recorded_opts(&scope, &customer, "{}");
        if deny {
            deny_access();
        } else {
            throw_on_every_call();
        }
        let c = Checkout::open(o.clone()).expect("open survives");
        assert_eq!(c.storage(), "memory");
        assert_eq!(
            fallbacks(&ev),
            [
                ("local".into(), "session".into()),
                ("session".into(), "memory".into())
            ]
        );
        let r = submit(&c, &js(PAY)).await.expect("submit works in memory");
        assert_eq!((num(&r, "status"), c.state()), (201.0, "succeeded".into()));
        // A second checkout of the page (a re-render) finds the same attempt in memory.
        let again = Checkout::open(o).unwrap();
        assert_eq!(again.key(), c.key());
        let cached = submit(&again, &js(PAY)).await.unwrap();
        assert!(flag(&cached, "fromCache"));
        assert!(idemkey::sweep(None).is_ok(), "sweep survives");
        repair();
        assert_eq!(ledger(&customer).await, vec![c.key()]);
        c.finish();
    }
}

#[wasm_bindgen_test]
async fn storage_that_throws_only_on_writes_keeps_the_pending_key() {
    repair();
    let customer = uniq("cust");
    let scope = uniq("ro");
    let k = unknown_outcome(&scope, &customer).await;
    // The page reloads with storage now refusing writes (a full disk): the record is
    // still readable, and its key's outcome is unknown.
    throw_on_writes();
    let (o, ev) = recorded_opts(&scope, &customer, "{}");
    let c = Checkout::open(o).expect("open survives");
    let key = c.key();
    let r = submit(&c, &js(PAY)).await;
    repair();
    assert!(!fallbacks(&ev).is_empty(), "a storage-fallback event");
    assert_eq!(key, k, "the pending key was given up: {:?}", types(&ev));
    let r = r.expect("the resumed submit gets the stored answer");
    assert_eq!(num(&r, "status"), 201.0);
    assert!(flag(&r, "replayed"));
    assert_eq!(ledger(&customer).await, vec![k], "charged once");
    c.finish();
}

#[wasm_bindgen_test]
async fn storage_that_throws_only_on_reads_never_overwrites_what_it_could_not_read() {
    repair();
    let customer = uniq("cust");
    let scope = uniq("wo");
    let k = unknown_outcome(&scope, &customer).await;
    throw_on_local_reads();
    let (o, ev) = recorded_opts(&scope, &customer, "{}");
    let c = Checkout::open(o);
    repair();
    let c = c.expect("open survives");
    assert!(
        !fallbacks(&ev).is_empty() || c.key() == k,
        "unreadable storage is neither reported nor read: {:?}",
        types(&ev)
    );
    assert_eq!(
        stored(&scope).map(|r| r.key),
        Some(k.clone()),
        "the pending record it could not read was overwritten"
    );
    c.finish();
}

#[wasm_bindgen_test]
async fn quota_exceeded_in_the_middle_of_a_submit_keeps_the_key_after_a_reload() {
    repair();
    let customer = uniq("cust");
    let scope = uniq("quota-mid");
    let (o, ev) = recorded_opts(&scope, &customer, FAST);
    let c = open(&o);
    wait_stored(&scope).await;
    schedule(&customer, r#"{"mode":"respond","status":503,"count":1}"#).await;
    // The pending write before the first try lands; the one before the second does not.
    throw_after_local_writes(1);
    let r = submit(&c, &js(PAY)).await;
    repair();
    let r = r.expect("the submit goes on in sessionStorage");
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(c.storage(), "session");
    assert_eq!(fallbacks(&ev), [("local".into(), "session".into())]);
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    // A reload once localStorage has room again: the attempt is not forgotten.
    let again = open(&opts(&scope, &customer, "{}"));
    assert_eq!(
        (again.key(), again.state()),
        (c.key(), "succeeded".into()),
        "the reload lost the succeeded attempt"
    );
    let cached = submit(&again, &js(PAY)).await.unwrap();
    assert!(flag(&cached, "fromCache"));
    assert_eq!(ledger(&customer).await.len(), 1, "charged once");
    session()
        .remove_item(&record_key("idemkey", &scope))
        .unwrap();
    again.finish();
}

#[wasm_bindgen_test]
async fn quota_exceeded_by_a_large_answer_keeps_the_answer() {
    repair();
    let customer = uniq("cust");
    let scope = uniq("quota-big");
    let (o, ev) = recorded_opts(&scope, &customer, "{}");
    let c = open(&o);
    let big = "x".repeat(8 * 1024);
    schedule(
        &customer,
        &format!(r#"{{"mode":"respond","status":200,"body":"{big}","content_type":"text/plain"}}"#),
    )
    .await;
    quota_for_local_values(4 * 1024);
    let r = submit(&c, &js(PAY)).await;
    repair();
    let r = r.expect("resolves with the answer");
    assert_eq!(num(&r, "status"), 200.0);
    assert_eq!(c.state(), "succeeded");
    assert_eq!(fallbacks(&ev), [("local".into(), "session".into())]);
    let again = open(&opts(&scope, &customer, "{}"));
    assert_eq!(
        (again.key(), again.state()),
        (c.key(), "succeeded".into()),
        "the reload lost the answer stored in sessionStorage"
    );
    session()
        .remove_item(&record_key("idemkey", &scope))
        .unwrap();
    again.finish();
}

/// Submits [`PAY`] with a 503 first and `edit` applied to the stored record between the
/// two tries; returns the checkout, its events, the result and the customer.
async fn edited_between_tries(
    edit: &str,
) -> (Checkout, Function, Result<JsValue, JsValue>, String, String) {
    let customer = uniq("cust");
    let scope = uniq("edited");
    let ev = recorder();
    let o = opts(&scope, &customer, FAST);
    let f = Function::new_with_args("old", edit);
    set(
        &o,
        "onEvent",
        &edit_on_first_retry(&ev, &record_key("idemkey", &scope), &f),
    );
    let c = open(&o);
    schedule(&customer, r#"{"mode":"respond","status":503,"count":1}"#).await;
    let r = submit(&c, &js(PAY)).await;
    (c, ev, r, customer, scope)
}

#[wasm_bindgen_test]
async fn a_record_edited_by_hand_between_two_tries_keeps_the_key() {
    repair();
    for edit in [
        // Another key, already "succeeded": a forged success must not end the attempt.
        r#"const r = JSON.parse(old); r.key = "00000000-0000-4000-8000-000000000000";
           r.state = "succeeded"; r.response = {status: 201, body: "{}", replayed: false};
           return JSON.stringify(r);"#,
        // Back to fresh with no attempts: the key stays bound to its payload.
        r#"const r = JSON.parse(old); r.state = "fresh"; r.attempts = 0; r.fp = null;
           return JSON.stringify(r);"#,
    ] {
        let (c, ev, r, customer, scope) = edited_between_tries(edit).await;
        let k = c.key();
        let r = r.expect("the submit finishes");
        assert_eq!(text(&r, "key"), k);
        assert_eq!(num(&r, "status"), 201.0);
        assert_eq!(num(&r, "attempts"), 2.0);
        assert_eq!(types(&ev).iter().filter(|t| *t == "attempt").count(), 2);
        assert_eq!(
            ledger(&customer).await,
            vec![k.clone()],
            "one charge, the key's"
        );
        let s = stored(&scope).unwrap();
        assert_eq!((s.key, s.state.as_str()), (k, "succeeded"), "{edit}");
        c.finish();
    }
}

#[wasm_bindgen_test]
async fn a_record_made_unreadable_between_two_tries_is_set_aside_with_an_event() {
    repair();
    for edit in [
        r#"return "{not json";"#,
        r#"return old.replace('"v":1', '"v":99');"#,
    ] {
        let (c, ev, r, customer, scope) = edited_between_tries(edit).await;
        let k = c.key();
        let r = r.expect("the submit finishes");
        assert_eq!((text(&r, "key"), num(&r, "status")), (k.clone(), 201.0));
        assert_eq!(
            ledger(&customer).await,
            vec![k.clone()],
            "one charge, the key's"
        );
        assert_eq!(stored(&scope).unwrap().key, k);
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
    repair();
    let customer = uniq("cust");
    let scope = uniq("future");
    let rk = record_key("idemkey", &scope);
    let now = js_sys::Date::now();
    let mut r = Record::new(idemkey::new_key(), scope.as_str(), now, 60_000.0);
    r.state = idemkey::core::state::State::Pending;
    r.fingerprint = Some("f1:0000000000000000".into());
    r.attempts = 1;
    let future = r
        .encode()
        .replacen("{\"v\":1,", "{\"v\":99,\"extra\":[1,2],", 1);
    local().set_item(&rk, &future).unwrap();
    let (o, ev) = recorded_opts(&scope, &customer, "{}");
    let c = open(&o);
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
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    local().remove_item(&q).unwrap();
    c.finish();
}

/// After IndexedDB came back (empty, or holding an older copy): a reload finds the attempt
/// that succeeded while it was gone, and a submit of the same payload sends nothing.
async fn after_indexeddb_is_back(scope: &str, customer: &str, k: &str) {
    repair();
    let again = open(&opts(scope, customer, "{}"));
    assert_eq!(
        (again.key(), again.state()),
        (k.to_string(), "succeeded".into())
    );
    let r = submit(&again, &js(PAY)).await.unwrap();
    assert_eq!(text(&r, "key"), k, "a new key once IndexedDB came back");
    assert!(
        flag(&r, "fromCache"),
        "sent again once IndexedDB came back: {r:?}"
    );
    assert_eq!(ledger(customer).await, vec![k.to_string()], "charged once");
    again.finish();
}

#[wasm_bindgen_test]
async fn indexeddb_unavailable_keeps_the_pending_key_in_local_storage() {
    repair();
    let customer = uniq("cust");
    let scope = uniq("no-idb");
    hide_indexed_db(&JsValue::UNDEFINED);
    let k = unknown_outcome(&scope, &customer).await;
    // A reload, still without IndexedDB: the key whose outcome is unknown is resumed.
    let (o, ev) = recorded_opts(&scope, &customer, "{}");
    let c = open(&o);
    assert_eq!(c.key(), k);
    let r = submit(&c, &js(PAY)).await;
    let fb = idb_fallbacks(&ev);
    assert_eq!(fb.len(), 1, "{:?}", types(&ev));
    assert_eq!(fb[0].0, "local");
    assert!(fb[0].1.contains("IndexedDB unavailable"), "{}", fb[0].1);
    let r = r.expect("the resumed submit gets the stored answer");
    assert_eq!((text(&r, "key"), num(&r, "status")), (k.clone(), 201.0));
    assert!(flag(&r, "replayed"));
    after_indexeddb_is_back(&scope, &customer, &k).await;
}

#[wasm_bindgen_test]
async fn indexeddb_that_fails_to_open_or_to_run_a_transaction_keeps_the_pending_key() {
    repair();
    let customer = uniq("cust");
    let scope = uniq("idb-fails");
    // IndexedDB holds the pending record, then starts failing.
    let k = unknown_outcome(&scope, &customer).await;
    break_indexed_db(&JsValue::UNDEFINED);
    fail_idb_open();
    let (o, ev) = recorded_opts(&scope, &customer, "{}");
    let c = open(&o);
    assert_eq!(c.key(), k);
    let r = submit(&c, &js(PAY)).await;
    let fb = idb_fallbacks(&ev);
    assert_eq!(fb.len(), 1, "{:?}", types(&ev));
    // The transaction of open()'s sweep may have failed first, and the connection with it.
    assert!(
        ["no transactions", "no open"]
            .iter()
            .any(|e| fb[0].1.contains(e)),
        "{}",
        fb[0].1
    );
    let r = r.expect("the resumed submit gets the stored answer");
    assert_eq!((text(&r, "key"), num(&r, "status")), (k.clone(), 201.0));
    // Once the connection is gone, reopening it fails as well.
    let (o, ev) = recorded_opts(&scope, &customer, "{}");
    let again = open(&o);
    let cached = submit(&again, &js(PAY)).await.unwrap();
    assert!(flag(&cached, "fromCache"));
    let fb = idb_fallbacks(&ev);
    assert_eq!(fb.len(), 1, "{:?}", types(&ev));
    assert!(fb[0].1.contains("no open"), "{}", fb[0].1);
    // IndexedDB comes back with its older copy (pending) of the attempt.
    after_indexeddb_is_back(&scope, &customer, &k).await;
}

#[wasm_bindgen_test]
async fn indexeddb_out_of_quota_in_the_middle_of_a_submit_keeps_the_answer() {
    repair();
    for from_the_start in [false, true] {
        let customer = uniq("cust");
        let scope = uniq("idb-quota");
        let (o, ev) = recorded_opts(&scope, &customer, FAST);
        if from_the_start {
            quota_on_idb_put();
        }
        let c = open(&o);
        wait_stored(&scope).await;
        schedule(&customer, r#"{"mode":"respond","status":503,"count":1}"#).await;
        quota_on_idb_put();
        let r = submit(&c, &js(PAY)).await;
        let fb = idb_fallbacks(&ev);
        assert_eq!(fb.len(), 1, "{:?}", types(&ev));
        assert_eq!(fb[0].0, "local");
        assert!(fb[0].1.contains("QuotaExceededError"), "{}", fb[0].1);
        let r = r.expect("the submit goes on in localStorage");
        assert_eq!(num(&r, "status"), 201.0);
        assert_eq!((num(&r, "attempts"), c.state()), (2.0, "succeeded".into()));
        after_indexeddb_is_back(&scope, &customer, &c.key()).await;
    }
}
