//! Reads the JS options object into core's `RawOptions` (type checks and unknown names
//! here, every other rule in `core::options`), plus the `onEvent` callback; last, asks the
//! browser whether `fetch` accepts the endpoint and headers (rules only it knows exactly).

use js_sys::{Array, Function, Object};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Headers, Request};

use super::js::{error_text, get};
use crate::core::options::{Options, RawOptions};
use crate::error::{Error, Result};

const KNOWN: [&str; 15] = [
    "scope",
    "endpoint",
    "method",
    "headers",
    "headerName",
    "headerFormat",
    "ttlSeconds",
    "timeoutMs",
    "maxRetries",
    "backoff",
    "deadlineMs",
    "storage",
    "namespace",
    "credentials",
    "onEvent",
];

fn bad(option: &str, reason: &str) -> Error {
    Error::invalid_option(option, reason)
}

/// `undefined` and `null` both mean "not given".
fn present(v: JsValue) -> Option<JsValue> {
    if v.is_undefined() || v.is_null() {
        None
    } else {
        Some(v)
    }
}

/// The own enumerable keys of a plain object, or an error naming `option`.
fn keys(v: &JsValue, option: &str) -> Result<Array> {
    if !v.is_object() || Array::is_array(v) || v.is_function() {
        return Err(bad(option, "must be an object"));
    }
    Ok(Object::keys(v.unchecked_ref::<Object>()))
}

fn string(o: &JsValue, name: &str) -> Result<Option<String>> {
    present(get(o, name))
        .map(|v| v.as_string().ok_or_else(|| bad(name, "must be a string")))
        .transpose()
}

fn number(o: &JsValue, name: &str, option: &str) -> Result<Option<f64>> {
    present(get(o, name))
        .map(|v| v.as_f64().ok_or_else(|| bad(option, "must be a number")))
        .transpose()
}

/// Validated options and the `onEvent` callback, or `invalid-options` naming the option.
pub(crate) fn read(js: &JsValue) -> Result<(Options, Option<Function>)> {
    for k in keys(js, "options")?.iter() {
        let k = k.as_string().unwrap_or_default();
        if !KNOWN.contains(&k.as_str()) {
            return Err(bad(&k, "is not a known option"));
        }
    }
    let mut raw = RawOptions {
        scope: string(js, "scope")?,
        endpoint: string(js, "endpoint")?,
        method: string(js, "method")?,
        header_name: string(js, "headerName")?,
        header_format: string(js, "headerFormat")?,
        ttl_seconds: number(js, "ttlSeconds", "ttlSeconds")?,
        timeout_ms: number(js, "timeoutMs", "timeoutMs")?,
        max_retries: number(js, "maxRetries", "maxRetries")?,
        deadline_ms: number(js, "deadlineMs", "deadlineMs")?,
        storage: string(js, "storage")?,
        namespace: string(js, "namespace")?,
        credentials: string(js, "credentials")?,
        ..RawOptions::default()
    };
    if let Some(h) = present(get(js, "headers")) {
        for k in keys(&h, "headers")?.iter() {
            let name = k.as_string().unwrap_or_default();
            let value = get(&h, &name)
                .as_string()
                .ok_or_else(|| bad("headers", "values must be strings"))?;
            raw.headers.push((name, value));
        }
    }
    if let Some(b) = present(get(js, "backoff")) {
        for k in keys(&b, "backoff")?.iter() {
            let k = k.as_string().unwrap_or_default();
            if k != "baseMs" && k != "maxMs" {
                let mut option = String::from("backoff.");
                option.push_str(&k);
                return Err(bad(&option, "is not a known option"));
            }
        }
        raw.backoff_base_ms = number(&b, "baseMs", "backoff.baseMs")?;
        raw.backoff_max_ms = number(&b, "maxMs", "backoff.maxMs")?;
    }
    let on_event = match present(get(js, "onEvent")) {
        None => None,
        Some(f) => Some(
            f.dyn_into::<Function>()
                .map_err(|_| bad("onEvent", "must be a function"))?,
        ),
    };
    let opts = Options::validate(raw)?;
    fetchable(&opts)?;
    Ok((opts, on_event))
}

/// Asks the browser whether `fetch` will take the endpoint and the extra headers, by its
/// own rules (URL parsing against the page, credentials in URLs, header values that are
/// not byte strings such as "€"). Checked at open: refused later, every try would fail
/// before leaving the page, be retried as a network error and end as `outcome-unknown`
/// with a pending key although nothing was ever sent.
fn fetchable(o: &Options) -> Result<()> {
    let refused = |option: &str, e: JsValue| {
        let mut reason = String::from("refused by fetch: ");
        reason.push_str(&error_text(&e));
        bad(option, &reason)
    };
    let h = Headers::new().map_err(|e| refused("headers", e))?;
    for (name, value) in &o.headers {
        h.set(name, value).map_err(|e| refused("headers", e))?;
    }
    Request::new_with_str(&o.endpoint).map_err(|e| refused("endpoint", e))?;
    Ok(())
}
