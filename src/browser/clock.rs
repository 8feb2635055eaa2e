//! Time and chance from the browser: `Date.now`, a `setTimeout` sleep, `Math.random`.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use super::task::JsFuture;

#[wasm_bindgen]
extern "C" {
    /// The global `setInterval`.
    #[wasm_bindgen(js_name = setInterval)]
    pub(crate) fn set_interval(f: &Function, ms: f64) -> JsValue;
    /// The global `clearInterval`.
    #[wasm_bindgen(js_name = clearInterval)]
    pub(crate) fn clear_interval(id: &JsValue);
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// A number in `[0, 1)` for backoff jitter.
pub(crate) fn random01() -> f64 {
    js_sys::Math::random()
}

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// A promise resolved after `ms` milliseconds (`setTimeout`).
    #[wasm_bindgen(js_name = sleep)]
    fn js_sleep(ms: f64) -> Promise;
}

/// Resolves after `ms` milliseconds. (A promise made in glue.js: `Promise::new` with a
/// Rust closure costs the wasm an import and the closure's shims.) The promise itself,
/// not an `async fn` around it: a future nested in the caller's costs it bytes.
pub(crate) fn sleep(ms: f64) -> JsFuture {
    JsFuture::from(js_sleep(ms))
}
