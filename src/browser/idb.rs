//! IndexedDB, where the tabs of an origin keep each scope's record: database `idemkey`,
//! object store `records`, the record texts under their storage keys. Its readwrite
//! transactions are ordered by the browser across tabs, so what one tab committed is what
//! the next reader gets (localStorage gives no such promise across tabs).
//!
//! A small JS binding (glue.js): web-sys's IndexedDB bindings cost many more bytes. The
//! connection is opened once per page, reopened after the browser closes it, and given up
//! after 5 s (a browser whose IndexedDB never answers must not hold the scope's lock for ever).

use crate::prelude::*;
use core::future::Future;
use js_sys::Promise;
use wasm_bindgen::prelude::*;

use super::js::{error_text, text};
use super::task::JsFuture;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = idbGet)]
    fn idb_get(key: &str) -> JsValue;
    #[wasm_bindgen(js_name = idbSet)]
    fn idb_set(key: &str, value: Option<&str>) -> JsValue;
    #[wasm_bindgen(js_name = idbSweep)]
    fn idb_sweep(prefix: &str, due: &Closure<dyn FnMut(String, String) -> bool>) -> JsValue;
}

/// Awaits one call's promise; the reason when the page has no IndexedDB or it failed.
async fn settle(p: JsValue) -> Result<JsValue, String> {
    let Some(p) = p.dyn_ref::<Promise>() else {
        return Err("IndexedDB unavailable".into());
    };
    JsFuture::from(p.clone()).await.map_err(|e| error_text(&e))
}

/// The text stored under `key`, if any.
pub(crate) async fn get(key: &str) -> Result<Option<String>, String> {
    Ok(text(&settle(idb_get(key)).await?))
}

/// Stores `value` under `key` (removes it for `None`); resolves once committed. The write
/// is queued when this is called, not when the future is first polled: any IndexedDB
/// request this module makes after the call comes after the write.
pub(crate) fn set(key: &str, value: Option<&str>) -> impl Future<Output = Result<(), String>> {
    let p = idb_set(key, value);
    async move { settle(p).await.map(|_| ()) }
}

/// Deletes, in one transaction, the entries under `prefix` for which `due(key, text)` says
/// so (decided inside the transaction: no lock holder's write can slip in between).
pub(crate) async fn sweep(prefix: &str, due: impl FnMut(String, String) -> bool + 'static) {
    let due = Closure::<dyn FnMut(String, String) -> bool>::new(due);
    // Errors ignored: an entry not swept now is swept by sweep() or by open() in a later page.
    let _ = settle(idb_sweep(prefix, &due)).await;
}
