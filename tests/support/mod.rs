//! Helpers shared by the browser test files: the shipped module's exports (shipped.rs),
//! options, JS snippets that patch the page (throwing storage, hidden Web Locks, a fetch
//! spy), the reference server's test API (faults, including exact scheduled answers, and
//! the ledger).
#![allow(dead_code)]

mod broken;
mod case;
mod shipped;
mod tabs;
mod tries;
#[allow(unused_imports)]
pub use broken::*;
#[allow(unused_imports)]
pub use case::*;
#[allow(unused_imports)]
pub use shipped::*;
#[allow(unused_imports)]
pub use tabs::*;
#[allow(unused_imports)]
pub use tries::*;

use idemkey::core::record::{Record, StoredResponse};
use idemkey::core::state::State;
use js_sys::{Array, Function, Promise, Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/tests/support/page.js")]
extern "C" {
    /// A function that records the events it is called with in `.events`, and when
    /// (`Date.now()`) in `.times`.
    pub fn recorder() -> Function;
    /// An `onEvent` that always throws.
    pub fn thrower() -> Function;
    /// Makes `Storage.prototype.setItem` throw (localStorage only, or all); returns the restore.
    #[wasm_bindgen(js_name = breakStorage)]
    pub fn break_storage(all: bool) -> Function;
    /// Hides `navigator.locks`; returns the restore.
    #[wasm_bindgen(js_name = hideLocks)]
    pub fn hide_locks() -> Function;
    /// [`hide_locks`] in the window `w` (a [`Tab`]'s); returns the restore.
    #[wasm_bindgen(js_name = hideLocksIn)]
    pub fn hide_locks_in(w: &JsValue) -> Function;
    /// Hides in the window `w` (a [`Tab`]'s) what Safari 15.0 to 15.3 lacks of what the
    /// module uses: `navigator.locks`, `BroadcastChannel` and `Object.hasOwn`; returns the
    /// restore.
    #[wasm_bindgen(js_name = hideSafari15In)]
    pub fn hide_safari_15_in(w: &JsValue) -> Function;
    /// Wraps `fetch`, recording requests in `.seen`; returns the restore.
    #[wasm_bindgen(js_name = spyFetch)]
    pub fn spy_fetch() -> Function;
    /// [`spy_fetch`] that also records, in each request's `stored`, the localStorage value
    /// of `watch` at the moment `fetch` was called (before any byte can leave).
    #[wasm_bindgen(js_name = spyFetch)]
    pub fn spy_fetch_watching(watch: &str) -> Function;
    #[wasm_bindgen(catch)]
    fn api(url: &str, method: &str, customer: &str, body: JsValue) -> Result<Promise, JsValue>;
    /// Takes the Web Lock `name` as another tab would: resolves, once held, with the
    /// function that releases it.
    #[wasm_bindgen(js_name = holdLock)]
    pub fn hold_lock(name: &str) -> Promise;
    /// Submits `payload` with the JS checkout `c`, and again from the first submit's own
    /// reaction; resolves with `[first, again]`.
    #[wasm_bindgen(js_name = submitTwice)]
    pub fn submit_twice(c: &JsValue, payload: &JsValue) -> Promise;
    /// Makes garbage every 20 ms, so that the collector runs while a request is on its way;
    /// returns the function that stops it.
    #[wasm_bindgen(js_name = churnGarbage)]
    pub fn churn_garbage() -> Function;
    /// `[value]` if `p` resolves within `ms`, else `null`.
    pub fn within(p: &Promise, ms: f64) -> Promise;
    /// Frees the JS checkout `c` and uses it again: `{ used: [[name, error name, code,
    /// message]], again }`, `again` what one more `free()` threw ("" for nothing).
    #[wasm_bindgen(js_name = usedAfterFree)]
    pub fn used_after_free(c: &JsValue) -> JsValue;
    /// Dispatches a `storage` event for localStorage as another tab's write would.
    #[wasm_bindgen(js_name = fireStorage)]
    pub fn fire_storage(key: &str, new_value: Option<String>);
}

/// The reference server's base URL, fixed when the tests were compiled.
pub const SERVER: &str = env!(
    "IDEMKEY_TEST_SERVER",
    "run the browser tests with scripts/wasm-test.sh, which starts the reference server"
);

/// `obj[name]`.
pub fn get(obj: &JsValue, name: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(name)).unwrap()
}

/// Sets `obj[name]`.
pub fn set(obj: &JsValue, name: &str, v: &JsValue) {
    Reflect::set(obj, &JsValue::from_str(name), v).unwrap();
}

/// A JS value from JSON text.
pub fn js(json: &str) -> JsValue {
    JSON::parse(json).unwrap()
}

/// A unique suffix for scopes, namespaces and customer ids.
pub fn uniq(prefix: &str) -> String {
    format!("{prefix}-{}", new_key())
}

/// Options for `scope` against the charges endpoint as `customer`, plus `extra` (JSON object
/// text), whose `scope`, `endpoint` or `headers` win over these.
pub fn opts(scope: &str, customer: &str, extra: &str) -> JsValue {
    let o = js(extra);
    let dflt = |name: &str, v: JsValue| {
        if !Reflect::has(&o, &JsValue::from_str(name)).unwrap() {
            set(&o, name, &v);
        }
    };
    dflt("scope", scope.into());
    dflt("endpoint", format!("{SERVER}/api/charges").into());
    dflt(
        "headers",
        js(&format!(r#"{{"X-Customer-Id":"{customer}"}}"#)),
    );
    o
}

/// `Checkout.open`, panicking with the error's message on failure.
pub fn open(o: &JsValue) -> Checkout {
    match Checkout::open(o.clone()) {
        Ok(c) => c,
        Err(e) => panic!("open failed: {:?}", get(&e, "message")),
    }
}

/// Awaits `checkout.submit(payload)`.
pub async fn submit(c: &Checkout, payload: &JsValue) -> Result<JsValue, JsValue> {
    JsFuture::from(c.submit(payload.clone())).await
}

/// Awaits `checkout.submit(PAY)`.
pub async fn pay(c: &Checkout) -> Result<JsValue, JsValue> {
    submit(c, &js(PAY)).await
}

/// The events a [`recorder`] got, as `type` strings.
pub fn types(rec: &Function) -> Vec<String> {
    Array::from(&get(rec, "events"))
        .iter()
        .map(|e| get(&e, "type").as_string().unwrap())
        .collect()
}

/// The events a [`recorder`] got of one type.
pub fn events_of(rec: &Function, ty: &str) -> Vec<JsValue> {
    Array::from(&get(rec, "events"))
        .iter()
        .filter(|e| get(e, "type").as_string().as_deref() == Some(ty))
        .collect()
}

/// Calls a restore function returned by a page patch.
pub fn restore(f: &Function) {
    f.call0(&JsValue::UNDEFINED).unwrap();
}

/// Asserts an IdemError with `code` and a message containing `needle`.
pub fn assert_idem_error(e: &JsValue, code: &str, needle: &str) {
    assert_eq!(
        get(e, "name").as_string().as_deref(),
        Some("IdemError"),
        "name of {e:?}"
    );
    assert!(e.is_instance_of::<js_sys::Error>(), "not an Error: {e:?}");
    assert_eq!(
        get(e, "code").as_string().as_deref(),
        Some(code),
        "code of {e:?}"
    );
    let msg = get(e, "message").as_string().unwrap();
    assert!(msg.contains(needle), "message {msg:?} lacks {needle:?}");
}

async fn call(path: &str, method: &str, customer: &str, body: JsValue) -> JsValue {
    let url = format!("{SERVER}{path}");
    JsFuture::from(api(&url, method, customer, body).unwrap())
        .await
        .unwrap()
}

/// Schedules `count` faults of `mode` for `customer`'s next charge requests.
pub async fn fault(customer: &str, mode: &str, count: u32, delay_ms: u32) {
    let body = js(&format!(
        r#"{{"mode":"{mode}","count":{count},"delay_ms":{delay_ms}}}"#
    ));
    call("/api/faults", "POST", customer, body).await;
}

/// Schedules a fault for `customer` from its JSON text (any mode and field of
/// `POST /api/faults`, e.g. `{"mode":"respond","status":429,"retry_after":"1"}`).
pub async fn schedule(customer: &str, spec: &str) {
    call("/api/faults", "POST", customer, js(spec)).await;
}

/// `GET /api/faults` for `customer`: `{ scheduled, taken }`.
pub async fn faults(customer: &str) -> JsValue {
    call("/api/faults", "GET", customer, JsValue::UNDEFINED).await
}

/// The events of one type a [`recorder`] got, each with the time it got it.
pub fn timed_events_of(rec: &Function, ty: &str) -> Vec<(JsValue, f64)> {
    let times = Array::from(&get(rec, "times"));
    Array::from(&get(rec, "events"))
        .iter()
        .zip(times.iter())
        .filter(|(e, _)| get(e, "type").as_string().as_deref() == Some(ty))
        .map(|(e, t)| (e, t.as_f64().unwrap()))
        .collect()
}

/// The keys of `customer`'s charges in the ledger.
pub async fn ledger(customer: &str) -> Vec<String> {
    let l = call("/api/charges", "GET", customer, JsValue::UNDEFINED).await;
    Array::from(&get(&l, "charges"))
        .iter()
        .map(|c| get(&c, "key").as_string().unwrap_or_default())
        .collect()
}

/// Resolves after `ms`.
pub async fn sleep(ms: i32) {
    let p = Promise::new(&mut |res, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&res, ms)
            .unwrap();
    });
    JsFuture::from(p).await.unwrap();
}

/// localStorage.
pub fn local() -> web_sys::Storage {
    web_sys::window().unwrap().local_storage().unwrap().unwrap()
}

/// sessionStorage.
pub fn session() -> web_sys::Storage {
    web_sys::window()
        .unwrap()
        .session_storage()
        .unwrap()
        .unwrap()
}

/// The record key of `scope` in namespace `ns`.
pub fn record_key(ns: &str, scope: &str) -> String {
    idemkey::core::record::record_key(ns, scope)
}

/// A record of `scope` made at `now` that lives `ttl_ms`, in `state`; one past fresh has been
/// sent once, and a succeeded one holds a 201 answer.
pub fn a_record(scope: &str, now: f64, ttl_ms: f64, state: State) -> Record {
    let mut r = Record::new(new_key(), scope, now, ttl_ms);
    r.state = state;
    if state != State::Fresh {
        r.fingerprint = Some("f1:0000000000000000".into());
        r.attempts = 1;
    }
    if state == State::Succeeded {
        r.response = Some(StoredResponse {
            status: 201,
            body: "{}".into(),
            replayed: false,
        });
    }
    r
}

/// The record of `scope` (namespace "idemkey") in localStorage, where the page copies it.
pub fn mirrored(scope: &str) -> Option<idemkey::core::record::Record> {
    local()
        .get_item(&record_key("idemkey", scope))
        .unwrap()
        .map(|t| idemkey::core::record::Record::decode(&t).unwrap())
}

/// What `p` resolves with (it must resolve).
pub async fn settled(p: Promise) -> JsValue {
    JsFuture::from(p).await.unwrap()
}

pub const PAY: &str = r#"{"amount":4200,"currency":"eur","items":[{"sku":"tea","qty":2}]}"#;
/// The same payload with every object's keys in another order.
pub const PAY_REORDERED: &str =
    r#"{"items":[{"qty":2,"sku":"tea"}],"currency":"eur","amount":4200}"#;
pub const OTHER: &str = r#"{"amount":999,"currency":"eur"}"#;
pub const DECLINED: &str = r#"{"amount":500,"currency":"eur","card":"4000000000000002"}"#;
/// Quick retries so the suite stays fast.
pub const FAST: &str = r#"{"backoff":{"baseMs":20,"maxMs":40}}"#;

/// [`opts`] with a new [`recorder`] as `onEvent`: the options and the recorder.
pub fn recorded_opts(scope: &str, customer: &str, extra: &str) -> (JsValue, Function) {
    let ev = recorder();
    let o = opts(scope, customer, extra);
    set(&o, "onEvent", &ev);
    (o, ev)
}

/// A checkout with a fresh scope and customer, and its event recorder.
pub fn checkout(extra: &str) -> (Checkout, String, js_sys::Function) {
    let customer = uniq("cust");
    let (o, ev) = recorded_opts(&uniq("cart"), &customer, extra);
    (open(&o), customer, ev)
}

pub fn field(r: &JsValue, name: &str) -> JsValue {
    get(r, name)
}

pub fn num(r: &JsValue, name: &str) -> f64 {
    field(r, name)
        .as_f64()
        .unwrap_or_else(|| panic!("{name} of {r:?}"))
}

pub fn flag(r: &JsValue, name: &str) -> bool {
    field(r, name)
        .as_bool()
        .unwrap_or_else(|| panic!("{name} of {r:?}"))
}

pub fn text(r: &JsValue, name: &str) -> String {
    field(r, name)
        .as_string()
        .unwrap_or_else(|| panic!("{name} of {r:?}"))
}

/// Polls `cond` every 10 ms until it holds (true) or `ms` pass (false): waits for an
/// observable step instead of guessing how long it takes on a slow machine.
pub async fn until(mut cond: impl FnMut() -> bool, ms: f64) -> bool {
    let t0 = js_sys::Date::now();
    loop {
        if cond() {
            return true;
        }
        if js_sys::Date::now() - t0 > ms {
            return false;
        }
        sleep(10).await;
    }
}

/// Waits until the [`recorder`] `ev` got `n` events of type `ty`; panics after 10 s.
pub async fn wait_events(ev: &Function, ty: &str, n: usize) {
    assert!(
        until(|| events_of(ev, ty).len() >= n, 10_000.0).await,
        "no {n} `{ty}` event(s) within 10 s: {:?}",
        types(ev)
    );
}
