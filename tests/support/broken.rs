//! Storage broken on purpose: the page patches (tests/support/page.js) that make the
//! browser's own localStorage, sessionStorage and IndexedDB throw, and what the tests of
//! broken storage share: a fresh case, a key whose outcome is unknown, the fallback events,
//! a reload.

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::*;

#[wasm_bindgen(module = "/tests/support/page.js")]
extern "C" {
    /// Undoes every patch below, and `hide_indexed_db` and `break_indexed_db` of this page
    /// (also run first by each test, so one failure stays local).
    pub fn repair();
    /// `window.localStorage` and `sessionStorage` throw SecurityError when touched.
    #[wasm_bindgen(js_name = denyAccess)]
    pub fn deny_access();
    /// Every Storage method and `length` throw SecurityError.
    #[wasm_bindgen(js_name = throwOnEveryCall)]
    pub fn throw_on_every_call();
    /// `setItem` throws QuotaExceededError everywhere; reads work.
    #[wasm_bindgen(js_name = throwOnWrites)]
    pub fn throw_on_writes();
    /// [`throw_on_writes`] in the window `w` (a [`Tab`]'s).
    #[wasm_bindgen(js_name = throwOnWrites)]
    pub fn throw_on_writes_in(w: &JsValue);
    /// `localStorage.getItem` throws; writes work.
    #[wasm_bindgen(js_name = throwOnLocalReads)]
    pub fn throw_on_local_reads();
    /// [`throw_on_local_reads`] in the window `w` (a [`Tab`]'s).
    #[wasm_bindgen(js_name = throwOnLocalReads)]
    pub fn throw_on_local_reads_in(w: &JsValue);
    /// `localStorage.setItem` works `n` more times, then throws QuotaExceededError.
    #[wasm_bindgen(js_name = throwAfterLocalWrites)]
    pub fn throw_after_local_writes(n: u32);
    /// `localStorage.setItem` throws QuotaExceededError for values longer than `max`.
    #[wasm_bindgen(js_name = quotaForLocalValues)]
    pub fn quota_for_local_values(max: u32);
    /// `indexedDB.open` throws UnknownError ("test: no open").
    #[wasm_bindgen(js_name = failIdbOpen)]
    pub fn fail_idb_open();
    /// Closes every connection to the `idemkey` database opened in this page, the module's
    /// among them, as a browser does when its IndexedDB server goes away.
    #[wasm_bindgen(js_name = closeIdbConnections)]
    pub fn close_idb_connections();
    /// Every IndexedDB `put` throws QuotaExceededError.
    #[wasm_bindgen(js_name = quotaOnIdbPut)]
    pub fn quota_on_idb_put();
    /// An `onEvent` that passes events to `recorder` and, at the first `retry` event,
    /// replaces the localStorage value of `storage_key` with `edit(old value)`.
    #[wasm_bindgen(js_name = editOnFirstRetry)]
    pub fn edit_on_first_retry(recorder: &Function, storage_key: &str, edit: &Function)
        -> Function;
}

/// Has the reference server answer `customer`'s next try with a 200 whose body is 8 KiB,
/// more than `quota_for_local_values(4 * 1024)` lets localStorage take.
pub async fn schedule_large_answer(customer: &str) {
    let big = "x".repeat(8 * 1024);
    schedule(
        customer,
        &format!(r#"{{"mode":"respond","status":200,"body":"{big}","content_type":"text/plain"}}"#),
    )
    .await;
}

/// The `storage-fallback` events, each as `"from -> to"`.
pub fn fallbacks(ev: &Function) -> Vec<String> {
    let fb = events_of(ev, "storage-fallback");
    fb.iter()
        .map(|e| format!("{} -> {}", text(e, "from"), text(e, "to")))
        .collect()
}

/// The one `storage-fallback` event from IndexedDB, as `(to, reason)`.
pub fn the_idb_fallback(ev: &Function) -> (String, String) {
    let fb: Vec<_> = events_of(ev, "storage-fallback")
        .iter()
        .filter(|e| text(e, "from") == "indexeddb")
        .map(|e| (text(e, "to"), text(e, "reason")))
        .collect();
    assert_eq!(fb.len(), 1, "{:?}", types(ev));
    fb[0].clone()
}

/// A fault spec: the server answers the next charge with a 503.
pub const ONE_503: &str = r#"{"mode":"respond","status":503,"count":1}"#;

/// A new [`Case`] on the page's storage repaired first (so one failure stays local).
pub fn case(what: &str) -> Case {
    repair();
    Case::new(what)
}

/// A reload of the page: a new page (a [`Tab`], its own instance of the module) opening
/// the checkout of `t` with default options, which must find the attempt `k` succeeded,
/// else panics with `why`. The page and its checkout.
pub async fn reload_finds_succeeded(t: &Case, k: &str, why: &str) -> (Tab, TabCheckout) {
    let page = Tab::open().await;
    let again = page.open_checkout(&opts(&t.scope, &t.customer, "{}"));
    let found = (again.key(), again.state());
    assert_eq!(found, (k.to_string(), "succeeded".into()), "{why}");
    (page, again)
}

/// A first submit of [`PAY`] for `t` that ended with an unknown outcome after the server
/// committed the charge (the answer was dropped): the record is pending under the returned
/// key, and the ledger holds that key's one charge.
pub async fn unknown_outcome(t: &Case) -> String {
    let c = open(&opts(&t.scope, &t.customer, r#"{"maxRetries":0}"#));
    fault(&t.customer, "drop-after-commit", 1, 0).await;
    let e = pay(&c).await.expect_err("the answer was dropped");
    assert_idem_error(&e, "outcome-unknown", "");
    assert_eq!(c.state(), "pending");
    assert_eq!(t.ledger().await, vec![c.key()], "committed once");
    c.key()
}

/// After IndexedDB came back (empty, or holding an older copy): a reload (a new page) finds
/// the attempt that succeeded while it was gone, and a submit of the same payload sends
/// nothing.
pub async fn after_indexeddb_is_back(t: &Case, k: &str) {
    repair();
    let why = "the reload lost what succeeded without IndexedDB";
    let (page, again) = reload_finds_succeeded(t, k, why).await;
    let r = again.submit(&js(PAY)).await;
    assert_eq!(
        text(&r, "key"),
        k,
        "a new key once IndexedDB came back: {r:?}"
    );
    assert!(
        flag(&r, "fromCache"),
        "sent again once IndexedDB came back: {r:?}"
    );
    assert_eq!(t.ledger().await, vec![k.to_string()], "charged once");
    again.finish();
    page.close();
}
