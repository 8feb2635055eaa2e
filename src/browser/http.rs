//! One HTTP try: `fetch` with a per-try timeout through an `AbortController`, the body read
//! as text, and the two response headers the flow needs. The call itself is a few lines of
//! JS (`glue.js`): through web-sys it took a binding, and a shim in the generated glue, for
//! each of the dozen browser functions it uses.
//!
//! No gloo-net, for bytes alone (see the README's "Dependencies"): its
//! `RequestBuilder::abort_signal(Some(&signal))` would keep `signal.aborted()` just as
//! usable to tell our timeout from a network error, but the flow needs one `fetch`.

use crate::prelude::*;
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;

use super::js::text;
use super::task::JsFuture;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// Resolves with `[status, body, retryAfter, replayed]`; rejects with `true` when the
    /// timeout aborted the try.
    #[wasm_bindgen(js_name = send)]
    #[allow(clippy::too_many_arguments)]
    fn js_send(
        url: &str,
        method: &str,
        headers: &str,
        key_name: &str,
        key_value: &str,
        body: &str,
        credentials: &str,
        timeout_ms: f64,
    ) -> Promise;
}

#[wasm_bindgen(module = "/src/browser/parse.js")]
extern "C" {
    /// An HTTP-date in ms since the epoch, NaN for anything else.
    #[wasm_bindgen(js_name = httpDate)]
    fn js_http_date(value: &str, now_ms: f64) -> f64;
}

/// An HTTP-date (any of its three forms) in ms since the epoch, read by the browser as the
/// core's `http_date_ms` reads it (the browser tests hold the two to the same answers).
pub(crate) fn http_date(value: &str, now_ms: f64) -> Option<f64> {
    Some(js_http_date(value, now_ms)).filter(|t| !t.is_nan())
}

/// Extra headers as `glue.js` takes them: names and values joined by "\n" (validated
/// options contain no CR, LF or NUL).
pub(crate) fn joined(headers: &[(String, String)]) -> String {
    let mut s = String::new();
    for (k, v) in headers {
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(k);
        s.push('\n');
        s.push_str(v);
    }
    s
}

/// What one try sends.
pub(crate) struct Try<'a> {
    /// Absolute or page-relative URL.
    pub(crate) url: &'a str,
    /// `POST`, `PUT`, `PATCH` or `DELETE`.
    pub(crate) method: &'a str,
    /// Extra headers from the options, [`joined`].
    pub(crate) headers: &'a str,
    /// The idempotency key header's name.
    pub(crate) key_name: &'a str,
    /// The key as the header carries it (plain or sf-string).
    pub(crate) key_value: &'a str,
    /// The JSON body.
    pub(crate) body: &'a str,
    /// `omit`, `same-origin` or `include`.
    pub(crate) credentials: &'a str,
    /// Abort the try after this long.
    pub(crate) timeout_ms: f64,
}

/// An HTTP answer.
pub(crate) struct Answer {
    /// Status code.
    pub(crate) status: u16,
    /// Body text ("" when empty).
    pub(crate) body: String,
    /// `Retry-After`, as sent.
    pub(crate) retry_after: Option<String>,
    /// `Idempotent-Replayed`, as sent.
    pub(crate) replayed: Option<String>,
}

/// Why a try got no answer.
pub(crate) enum NoAnswer {
    /// Connection failed, dropped, CORS refused, ...
    Network,
    /// Our timeout aborted it.
    Timeout,
}

/// Sends one try; its future settles with the whole answer, read within `timeout_ms`,
/// which [`answer`] takes apart. `fetch` is called before
/// this returns, not when the future is first polled: what the caller does in between
/// happens while the request is on its way.
pub(crate) fn send(t: &Try<'_>) -> JsFuture {
    JsFuture::from(js_send(
        t.url,
        t.method,
        t.headers,
        t.key_name,
        t.key_value,
        t.body,
        t.credentials,
        t.timeout_ms,
    ))
}

/// What the future of [`send`] settled with, as the whole answer or why there is none.
pub(crate) fn answer(settled: Result<JsValue, JsValue>) -> Result<Answer, NoAnswer> {
    match settled {
        Ok(v) => {
            let a: Array = v.unchecked_into();
            Ok(Answer {
                status: a.get(0).as_f64().unwrap_or(0.0) as u16,
                body: text(&a.get(1)).unwrap_or_default(),
                retry_after: text(&a.get(2)),
                replayed: text(&a.get(3)),
            })
        }
        Err(aborted) if aborted.is_truthy() => Err(NoAnswer::Timeout),
        Err(_) => Err(NoAnswer::Network),
    }
}
