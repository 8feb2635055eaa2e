//! One HTTP try with web-sys `fetch`: a per-try timeout through an `AbortController`,
//! the body read as text, and the two response headers the flow needs.
//!
//! web-sys rather than gloo-net, for bytes alone (see the README's "Dependencies"): gloo-net's
//! `RequestBuilder::abort_signal(Some(&signal))` would keep `signal.aborted()` just as
//! usable to tell our timeout from a network error, but the flow needs one `fetch`, and
//! calling it directly costs less.

use crate::prelude::*;
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, Request, RequestCredentials, RequestInit, Response};

use super::clock::{clear_timeout, set_timeout};

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (window or worker).
    #[wasm_bindgen(js_name = fetch)]
    fn fetch_request(req: &Request) -> Promise;
}

/// What one try sends.
pub(crate) struct Try<'a> {
    /// Absolute or page-relative URL.
    pub(crate) url: &'a str,
    /// `POST`, `PUT`, `PATCH` or `DELETE`.
    pub(crate) method: &'a str,
    /// Extra headers from the options, then the key header.
    pub(crate) headers: &'a [(String, String)],
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

/// Sends one try and reads the whole answer within `timeout_ms`.
pub(crate) async fn send(t: &Try<'_>) -> Result<Answer, NoAnswer> {
    let ctrl = AbortController::new().map_err(|_| NoAnswer::Network)?;
    let signal = ctrl.signal();
    // `ctrl.abort` bound to `ctrl`: a timer callback without a Rust closure.
    let abort: Function = Reflect::get(&ctrl, &"abort".into())
        .map_err(|_| NoAnswer::Network)?
        .unchecked_into();
    let timer = set_timeout(&abort.bind0(&ctrl), t.timeout_ms);
    let r = exchange(t, &signal).await;
    clear_timeout(&timer);
    r.map_err(|_| {
        if signal.aborted() {
            NoAnswer::Timeout
        } else {
            NoAnswer::Network
        }
    })
}

async fn exchange(t: &Try<'_>, signal: &web_sys::AbortSignal) -> Result<Answer, JsValue> {
    let headers = Headers::new()?;
    headers.set("content-type", "application/json")?;
    for (k, v) in t.headers {
        headers.set(k, v)?;
    }
    headers.set(t.key_name, t.key_value)?;
    let init = RequestInit::new();
    init.set_method(t.method);
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(t.body));
    init.set_credentials(match t.credentials {
        "omit" => RequestCredentials::Omit,
        "include" => RequestCredentials::Include,
        _ => RequestCredentials::SameOrigin,
    });
    init.set_signal(Some(signal));
    let req = Request::new_with_str_and_init(t.url, &init)?;
    let resp: Response = JsFuture::from(fetch_request(&req)).await?.unchecked_into();
    let h = resp.headers();
    let retry_after = h.get("retry-after").ok().flatten();
    let replayed = h.get(crate::core::header::REPLAYED_HEADER).ok().flatten();
    let body = JsFuture::from(resp.text()?)
        .await?
        .as_string()
        .unwrap_or_default();
    Ok(Answer {
        status: resp.status(),
        body,
        retry_after,
        replayed,
    })
}
