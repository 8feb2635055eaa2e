//! Reads the JS options object into core's `RawOptions` (type checks and unknown names
//! here, every other rule in `core::options`), plus the `onEvent` callback; last, asks the
//! browser whether `fetch` accepts the endpoint and headers (rules only it knows exactly).
//!
//! The object's own enumerable properties are walked once (as `JSON.stringify` and object
//! spread see them) and each is looked up in a table of what it must be: one loop instead
//! of a read per option keeps `Checkout.open` small and sends no option name to JS.

use crate::prelude::*;
use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::http::joined;
use super::js::error_text;
use crate::core::options::{Options, RawOptions};
use crate::error::{Error, Result};

/// What an option's value must be, and where it goes.
enum Slot {
    Str(fn(&mut RawOptions) -> &mut Option<String>),
    Num(fn(&mut RawOptions) -> &mut Option<f64>),
    /// `headers`: an object of strings.
    Headers,
    /// `backoff`: an object read with [`BACKOFF`].
    Backoff,
    /// `onEvent`: a function.
    OnEvent,
}

const OPTIONS: [(&str, Slot); 15] = [
    ("scope", Slot::Str(|r| &mut r.scope)),
    ("endpoint", Slot::Str(|r| &mut r.endpoint)),
    ("method", Slot::Str(|r| &mut r.method)),
    ("headers", Slot::Headers),
    ("headerName", Slot::Str(|r| &mut r.header_name)),
    ("headerFormat", Slot::Str(|r| &mut r.header_format)),
    ("ttlSeconds", Slot::Num(|r| &mut r.ttl_seconds)),
    ("timeoutMs", Slot::Num(|r| &mut r.timeout_ms)),
    ("maxRetries", Slot::Num(|r| &mut r.max_retries)),
    ("backoff", Slot::Backoff),
    ("deadlineMs", Slot::Num(|r| &mut r.deadline_ms)),
    ("storage", Slot::Str(|r| &mut r.storage)),
    ("namespace", Slot::Str(|r| &mut r.namespace)),
    ("credentials", Slot::Str(|r| &mut r.credentials)),
    ("onEvent", Slot::OnEvent),
];

const BACKOFF: [(&str, Slot); 2] = [
    ("baseMs", Slot::Num(|r| &mut r.backoff_base_ms)),
    ("maxMs", Slot::Num(|r| &mut r.backoff_max_ms)),
];

fn bad(option: &str, reason: &str) -> Error {
    Error::invalid_option(option, reason)
}

/// `prefix` + `name`: how an error names a nested option (`backoff.baseMs`).
fn named(prefix: &str, name: &str) -> String {
    let mut s = String::from(prefix);
    s.push_str(name);
    s
}

/// The own enumerable `[key, value]` pairs of a plain object, or an error naming `option`.
fn entries(v: &JsValue, option: &str) -> Result<Array> {
    if !v.is_object() || Array::is_array(v) || v.is_function() {
        return Err(bad(option, "must be an object"));
    }
    Ok(Object::keys(v.unchecked_ref::<Object>()))
}

/// Reads the properties of `obj` into `raw` by `table`; `prefix` names nested options.
fn fill(
    obj: &JsValue,
    option: &str,
    prefix: &str,
    table: &[(&str, Slot)],
    raw: &mut RawOptions,
    on_event: &mut Option<Function>,
) -> Result<()> {
    for k in entries(obj, option)?.iter() {
        let name = k.as_string().unwrap_or_default();
        let Some((_, slot)) = table.iter().find(|(n, _)| *n == name) else {
            return Err(bad(&named(prefix, &name), "is not a known option"));
        };
        let v = Reflect::get(obj, &k).unwrap_or(JsValue::UNDEFINED);
        // `undefined` and `null` both mean "not given".
        if v.is_undefined() || v.is_null() {
            continue;
        }
        let wrong = |what| bad(&named(prefix, &name), what);
        match slot {
            Slot::Str(at) => {
                *at(raw) = Some(v.as_string().ok_or_else(|| wrong("must be a string"))?)
            }
            Slot::Num(at) => *at(raw) = Some(v.as_f64().ok_or_else(|| wrong("must be a number"))?),
            Slot::Headers => {
                for h in entries(&v, "headers")?.iter() {
                    let value = Reflect::get(&v, &h).unwrap_or(JsValue::UNDEFINED);
                    let value = value
                        .as_string()
                        .ok_or_else(|| wrong("values must be strings"))?;
                    raw.headers.push((h.as_string().unwrap_or_default(), value));
                }
            }
            Slot::Backoff => fill(&v, "backoff", "backoff.", &BACKOFF, raw, on_event)?,
            Slot::OnEvent => {
                *on_event = Some(v.dyn_into().map_err(|_| wrong("must be a function"))?)
            }
        }
    }
    Ok(())
}

/// Validated options and the `onEvent` callback, or `invalid-options` naming the option.
pub(crate) fn read(js: &JsValue) -> Result<(Options, Option<Function>)> {
    let mut raw = RawOptions::default();
    let mut on_event = None;
    fill(js, "options", "", &OPTIONS, &mut raw, &mut on_event)?;
    let opts = Options::validate(raw)?;
    fetchable(&opts)?;
    Ok((opts, on_event))
}

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// `null`, or `[option, error]` for what `fetch` would refuse.
    fn refused(url: &str, headers: &str) -> JsValue;
}

/// Asks the browser whether `fetch` will take the endpoint and the extra headers, by its
/// own rules (URL parsing against the page, credentials in URLs, header values that are
/// not byte strings such as "€"). Checked at open: refused later, every try would fail
/// before leaving the page, be retried as a network error and end as `outcome-unknown`
/// with a pending key although nothing was ever sent.
fn fetchable(o: &Options) -> Result<()> {
    let r = refused(&o.endpoint, &joined(&o.headers));
    if r.is_null() {
        return Ok(());
    }
    let r: Array = r.unchecked_into();
    let option = r.get(0).as_string().unwrap_or_default();
    Err(bad(
        &option,
        &named("refused by fetch: ", &error_text(&r.get(1))),
    ))
}
