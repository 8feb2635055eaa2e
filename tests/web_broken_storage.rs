//! Browser tests with the browser's own storage broken on purpose by page JS: storage that
//! throws on every call or cannot even be reached; a record edited by hand between two
//! tries; a record from a future version. Each ends in a defined state with an event,
//! against the real reference server, and no key whose outcome is unknown is given up.
#![cfg(target_arch = "wasm32")]

mod support;

use idemkey::core::record::Record;
use idemkey::Checkout;
use js_sys::Function;
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = r#"
const P = Storage.prototype;
const saved = {};
for (const m of ["getItem", "setItem", "removeItem", "key", "clear"]) saved[m] = P[m];
const savedLength = Object.getOwnPropertyDescriptor(P, "length");
const savedAreas = {};
for (const a of ["localStorage", "sessionStorage"]) {
  savedAreas[a] = Object.getOwnPropertyDescriptor(window, a) || null;
}
const fail = (name) => () => { throw new DOMException("test: " + name, name); };

export function repair() {
  Object.assign(P, saved);
  Object.defineProperty(P, "length", savedLength);
  for (const a of Object.keys(savedAreas)) {
    if (savedAreas[a]) Object.defineProperty(window, a, savedAreas[a]);
  }
}
export function denyAccess() {
  for (const a of ["localStorage", "sessionStorage"]) {
    Object.defineProperty(window, a, { get: fail("SecurityError"), configurable: true });
  }
}
export function throwOnEveryCall() {
  for (const m of Object.keys(saved)) P[m] = fail("SecurityError");
  Object.defineProperty(P, "length", { get: fail("SecurityError"), configurable: true });
}
export function editOnFirstRetry(recorder, storageKey, edit) {
  let done = false;
  return (e) => {
    if (!done && e.type === "retry") {
      done = true;
      const before = saved.getItem.call(localStorage, storageKey);
      saved.setItem.call(localStorage, storageKey, edit(before));
    }
    recorder(e);
  };
}
"#)]
extern "C" {
    /// Undoes every patch below (also run first by each test, so one failure stays local).
    fn repair();
    /// `window.localStorage` and `sessionStorage` throw SecurityError when touched.
    #[wasm_bindgen(js_name = denyAccess)]
    fn deny_access();
    /// Every Storage method and `length` throw SecurityError.
    #[wasm_bindgen(js_name = throwOnEveryCall)]
    fn throw_on_every_call();
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
