//! Reads the JS options object into core's `RawOptions` (type checks and unknown names
//! in `glue.js`'s `readOptions`, every other rule in `core::options`), plus the `onEvent`
//! callback; last, asks the browser whether `fetch` accepts the endpoint and headers (rules
//! only it knows exactly).
//!
//! `readOptions` walks the object's own enumerable properties once (as `JSON.stringify`
//! and object spread see them), each looked up in a table of what it must be, and hands
//! back the values by slot: a loop of JS instead of a `Reflect` call per option.

use crate::prelude::*;
use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use super::http::joined;
use super::js::text;
use crate::core::options::{Options, RawOptions};

/// Validated options and the `onEvent` callback, or the `invalid-options` IdemError naming
/// the option.
pub(crate) fn read(js: &JsValue) -> Result<(Options, Option<Function>), JsValue> {
    let a = read_options(js)?;
    let s = |i| text(&a.get(i));
    let n = |i| a.get(i).as_f64();
    let mut headers = Vec::new();
    // The name/value pairs when given (an array, else undefined: no `isArray` import).
    let h = a.get(3);
    if !h.is_undefined() {
        let h: &Array = h.unchecked_ref();
        let item = |i| text(&h.get(i)).unwrap_or_default();
        // By pair index: `step_by` links an iterator of its own.
        for i in 0..h.length() / 2 {
            headers.push((item(2 * i), item(2 * i + 1)));
        }
    }
    let raw = RawOptions {
        scope: s(0),
        endpoint: s(1),
        method: s(2),
        headers,
        header_name: s(4),
        header_format: s(5),
        ttl_seconds: n(6),
        timeout_ms: n(7),
        max_retries: n(8),
        backoff_base_ms: n(9),
        backoff_max_ms: n(10),
        deadline_ms: n(11),
        storage: s(12),
        namespace: s(13),
        credentials: s(14),
    };
    let opts = Options::from_raw(raw)?;
    // Asked of the browser last: its rules come after the core's, which it relies on (the
    // headers are joined with "\n", which validated ones do not contain).
    let refused = refused(&opts.endpoint, &joined(&opts.headers));
    if !refused.is_null() {
        return Err(refused);
    }
    // `readOptions` checked its type: a function, or undefined when not given.
    let on_event = a.get(15);
    Ok((
        opts,
        (!on_event.is_undefined()).then(|| on_event.unchecked_into()),
    ))
}

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// `null`, or the `invalid-options` IdemError for what `fetch` would refuse: the
    /// endpoint or the extra headers, by the browser's own rules (URL parsing against the
    /// page, credentials in URLs, header values that are not byte strings such as "€").
    /// Checked at open: refused later, every try would fail before leaving the page, be
    /// retried as a network error and end as `outcome-unknown` with a pending key although
    /// nothing was ever sent.
    fn refused(url: &str, headers: &str) -> JsValue;
    /// The options object's 16 values by slot (types checked); throws the
    /// `invalid-options` IdemError for an unknown or wrongly typed option.
    #[wasm_bindgen(catch, js_name = readOptions)]
    fn read_options(options: &JsValue) -> Result<Array, JsValue>;
}
