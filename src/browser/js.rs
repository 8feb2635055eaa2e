//! Tiny helpers for JS values: the result and error objects (built by `glue.js`, smaller
//! than serde or a `Reflect::set` per field), reading a property, the text of a thrown value.

use crate::prelude::*;
use js_sys::Reflect;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// `{ key, status, ok, body, replayed, fromCache, attempts }`, `body` parsed as JSON
    /// when it is JSON, `null` when empty.
    pub(crate) fn result(
        key: &str,
        status: u16,
        body: &str,
        replayed: bool,
        from_cache: bool,
        attempts: u32,
    ) -> JsValue;
    /// An `Error` with `name` "IdemError", `message` and `code`.
    #[wasm_bindgen(js_name = idemError)]
    pub(crate) fn idem_error(message: &str, code: &str) -> JsValue;
}

/// `obj[name]`, or `undefined` when `obj` is not an object or the getter throws.
pub(crate) fn get(obj: &JsValue, name: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// `name: message` of a thrown JS value (DOMException, Error), or a fixed text.
pub(crate) fn error_text(e: &JsValue) -> String {
    let mut s = get(e, "name").as_string().unwrap_or_default();
    if let Some(m) = get(e, "message").as_string() {
        if !s.is_empty() {
            s.push_str(": ");
        }
        s.push_str(&m);
    }
    if s.is_empty() {
        s.push_str("unknown error");
    }
    s
}
