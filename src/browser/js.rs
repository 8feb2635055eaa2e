//! Tiny helpers for JS values, all made in `glue.js` (smaller than serde, or a `Reflect`
//! call per field): the result and error objects, the text of a thrown value.

use crate::prelude::*;
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
    /// `name: message` of a thrown JS value (DOMException, Error), or "unknown error".
    #[wasm_bindgen(js_name = errorText)]
    pub(crate) fn error_text(e: &JsValue) -> String;
    /// `v` if it is a string. (`JsValue::as_string` brings a slice conversion along with it,
    /// for the same answer.)
    pub(crate) fn text(v: &JsValue) -> Option<String>;
}
