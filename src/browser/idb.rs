//! IndexedDB, where the tabs of an origin keep each scope's record: database `idemkey`,
//! object store `records`, the record texts under their storage keys. Its readwrite
//! transactions are ordered by the browser across tabs, so what one tab committed is what
//! the next reader gets (localStorage gives no such promise across tabs).
//!
//! A small JS binding (glue.js): web-sys's IndexedDB bindings cost many more bytes. The
//! connection is opened once per page, reopened after the browser closes it, and given up
//! after 5 s (a browser whose IndexedDB never answers must not hold the scope's lock for ever).
//! A request that finds the connection closed or lost under it (InvalidStateError,
//! UnknownError) is made once more on a new connection; [`take_reopened`] says so.

use crate::prelude::*;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use js_sys::Promise;
use wasm_bindgen::prelude::*;

use super::js::{error_text, text};
use super::task::{JsFuture, Then};

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = idbGet)]
    fn idb_get(key: &str) -> JsValue;
    #[wasm_bindgen(js_name = idbSet)]
    fn idb_set(key: &str, value: Option<&str>) -> JsValue;
    #[wasm_bindgen(js_name = idbSweep)]
    fn idb_sweep(prefix: &str, due: &Closure<dyn FnMut(String, String) -> bool>) -> JsValue;
    #[wasm_bindgen(js_name = idbReopened)]
    fn idb_reopened() -> JsValue;
}

/// The browser's error that made a request open the connection again and try once more,
/// since the last call (page-wide), if one did.
pub(crate) fn take_reopened() -> Option<String> {
    text(&idb_reopened())
}

/// One call's outcome, once its promise settles: the text it resolved with (none for a
/// missing entry or a write), or the reason when the page has no IndexedDB or it failed.
/// Written out rather than an `async fn`: a future nested in the caller's costs it bytes.
pub(crate) struct Request(Option<JsFuture>);

impl Request {
    fn new(p: JsValue) -> Request {
        // glue.js gives a promise or null: no `instanceof` check (an import) needed.
        Request((!p.is_null()).then(|| JsFuture::from(p.unchecked_into::<Promise>())))
    }
}

/// What a [`Request`] ends with.
pub(crate) type Done = Result<Option<String>, String>;

impl Future for Request {
    type Output = Done;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(f) = &mut self.0 else {
            return Poll::Ready(Err("IndexedDB unavailable".into()));
        };
        Pin::new(f)
            .poll(cx)
            .map(|r| r.map(|v| text(&v)).map_err(|e| error_text(&e)))
    }
}

/// The text stored under `key`, if any.
pub(crate) fn get(key: &str) -> Request {
    Request::new(idb_get(key))
}

/// Stores `value` under `key` (removes it for `None`); resolves once committed (with no
/// text). The write is queued when this is called, not when the future is first polled:
/// any IndexedDB request this module makes after the call comes after the write.
pub(crate) fn set(key: &str, value: Option<&str>) -> Request {
    Request::new(idb_set(key, value))
}

/// Deletes, in one transaction, the entries under `prefix` for which `due(key, text)` says
/// so (decided inside the transaction: no lock holder's write can slip in between). The
/// sweep is asked for when this is called, not when the future is first polled (the
/// caller awaits it at once); the future is the request's, `due` kept until it settles.
pub(crate) fn sweep(
    prefix: &str,
    due: impl FnMut(String, String) -> bool + 'static,
) -> impl Future<Output = ()> {
    let due = Closure::<dyn FnMut(String, String) -> bool>::new(due);
    let request = Request::new(idb_sweep(prefix, &due));
    // Errors ignored: an entry not swept now is swept by sweep() or by open() in a later page.
    Then::new(request, move |_: Done| drop(due))
}
