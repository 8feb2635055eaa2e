//! Time and chance from the browser: `Date.now`, a `setTimeout` sleep, `Math.random`.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    /// The global `setTimeout` (window or worker).
    #[wasm_bindgen(js_name = setTimeout)]
    pub(crate) fn set_timeout(f: &Function, ms: f64) -> JsValue;
    /// The global `clearTimeout`.
    #[wasm_bindgen(js_name = clearTimeout)]
    pub(crate) fn clear_timeout(id: &JsValue);
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

/// Resolves after `ms` milliseconds.
pub(crate) async fn sleep(ms: f64) {
    let p = Promise::new(&mut |resolve, _| {
        set_timeout(&resolve, ms);
    });
    let _ = JsFuture::from(p).await;
}
