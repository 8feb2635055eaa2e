//! Reads the JS options object into core's `RawOptions` by name (type checks and unknown
//! names in the driver's `readOptions`, every other rule in `core::options`), plus the
//! `onEvent` callback; last, asks the browser whether `fetch` accepts the endpoint and
//! headers (rules only it knows exactly).

use crate::prelude::*;

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use super::ffi::{kind, member, read_options, refused, text};
use super::live::joined;
use crate::core::options::{Options, RawOptions};

/// Validated options and the `onEvent` callback, or the `invalid-options` IdemError naming
/// the option.
pub(crate) fn read(js: &JsValue) -> Result<(Options, Option<Function>), JsValue> {
    let o = read_options(js)?;
    // `readOptions`'s object has no prototype: its members are the options given.
    let get = |name| member(&o, name);
    let s = |name| text(&get(name));
    // `readOptions` checked the type: a number, or undefined when not given.
    let n = |name| {
        let v = get(name);
        (kind(&v) == 4).then(|| v.unchecked_into_f64())
    };
    let mut headers = Vec::new();
    let h = get("headers");
    if kind(&h) != 0 {
        let h: &Array = h.unchecked_ref();
        let item = |i| text(&h.get(i)).unwrap_or_default();
        for i in 0..h.length() / 2 {
            headers.push((item(2 * i), item(2 * i + 1)));
        }
    }
    let raw = RawOptions {
        scope: s("scope"),
        endpoint: s("endpoint"),
        method: s("method"),
        headers,
        header_name: s("headerName"),
        header_format: s("headerFormat"),
        ttl_seconds: n("ttlSeconds"),
        timeout_ms: n("timeoutMs"),
        max_retries: n("maxRetries"),
        backoff_base_ms: n("backoff.baseMs"),
        backoff_max_ms: n("backoff.maxMs"),
        deadline_ms: n("deadlineMs"),
        storage: s("storage"),
        namespace: s("namespace"),
        credentials: s("credentials"),
    };
    let opts = Options::from_raw(raw)?;
    // Asked of the browser last: its rules come after the core's, which it relies on (the
    // headers are joined with "\n", which validated ones do not contain). Refused later,
    // every try would fail before leaving the page and end as `outcome-unknown`.
    let refused = refused(&opts.endpoint, &joined(&opts.headers));
    if kind(&refused) != 1 {
        return Err(refused);
    }
    // `readOptions` checked its type: a function, or undefined when not given.
    let on_event = get("onEvent");
    Ok((
        opts,
        (kind(&on_event) != 0).then(|| on_event.unchecked_into()),
    ))
}
