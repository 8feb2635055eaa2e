//! Helpers for tests of several tabs: another browsing context of the origin (a frame
//! with its own instance of the module), IndexedDB as idemkey keeps it, and page patches
//! that hide or break IndexedDB.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::{flag, get, js, num, recorder, text, PAY};

#[wasm_bindgen(module = "/tests/support/page.js")]
extern "C" {
    /// Hides `indexedDB` on the window `w` (this page's when undefined); returns the restore.
    #[wasm_bindgen(js_name = hideIndexedDb)]
    pub fn hide_indexed_db(w: &JsValue) -> Function;
    /// Makes every IndexedDB transaction of the window `w` (or this page's) throw; returns
    /// the restore.
    #[wasm_bindgen(js_name = breakIndexedDb)]
    pub fn break_indexed_db(w: &JsValue) -> Function;
    #[wasm_bindgen(js_name = idbPut)]
    fn idb_put_js(key: &str, value: &str) -> Promise;
    #[wasm_bindgen(js_name = idbGet)]
    fn idb_get_js(key: &str) -> Promise;
    #[wasm_bindgen(js_name = idbDelete)]
    fn idb_delete_js(key: &str) -> Promise;
    #[wasm_bindgen(js_name = openTab)]
    fn open_tab_js() -> Promise;
    #[wasm_bindgen(js_name = tabOpen, catch)]
    fn tab_open_js(tab: &JsValue, options: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = tabOpenRecorded, catch)]
    fn tab_open_recorded_js(
        tab: &JsValue,
        options: &JsValue,
        rec: &Function,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = tabSubmit)]
    fn tab_submit_js(checkout: &JsValue, payload: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = tabFinish)]
    fn tab_finish_js(checkout: &JsValue) -> bool;
    #[wasm_bindgen(js_name = holdLockIn)]
    fn hold_lock_in_js(w: &JsValue, name: &str) -> Promise;
    /// Removes the frame of a [`Tab`], as closing a tab ends its page.
    #[wasm_bindgen(js_name = tabClose)]
    fn tab_close_js(tab: &JsValue);
    /// A member of idemkey's channel that records in `.seen` the texts it gets for the
    /// record `name`.
    #[wasm_bindgen(js_name = listenChannel)]
    pub fn listen_channel(name: &str) -> JsValue;
    /// Counts the BroadcastChannels the page makes from now on; returns the function that
    /// stops counting and returns how many.
    #[wasm_bindgen(js_name = countChannels)]
    pub fn count_channels() -> Function;
    /// Counts the Requests the page makes from now on; returns the function that stops
    /// counting and returns how many.
    #[wasm_bindgen(js_name = countRequests)]
    pub fn count_requests() -> Function;
}

/// Deletes `key` from the IndexedDB store idemkey uses, as a browser that lost it would.
pub async fn idb_delete(key: &str) {
    JsFuture::from(idb_delete_js(key)).await.unwrap();
}

/// Stores `value` at `key` in the IndexedDB store idemkey uses, as another tab would.
pub async fn idb_put(key: &str, value: &str) {
    JsFuture::from(idb_put_js(key, value)).await.unwrap();
}

/// The text IndexedDB holds at `key`.
pub async fn idb_get(key: &str) -> Option<String> {
    JsFuture::from(idb_get_js(key)).await.unwrap().as_string()
}

/// Another browsing context of this origin (a same-origin frame with its own instance of
/// the module, its own globals, the origin's storage, locks and channels): a second tab.
pub struct Tab(pub JsValue);

impl Tab {
    /// Opens the frame and loads the module into it.
    pub async fn open() -> Tab {
        Tab(JsFuture::from(open_tab_js()).await.unwrap())
    }

    /// The frame's window.
    pub fn window(&self) -> JsValue {
        get(&self.0, "window")
    }

    /// `Checkout.open(options)` in this tab (`options` without functions).
    pub fn checkout(&self, options: &JsValue) -> JsValue {
        tab_open_js(&self.0, options).unwrap()
    }

    /// [`Tab::checkout`] with a [`recorder`] of this page as `onEvent`.
    pub fn checkout_recorded(&self, options: &JsValue) -> (JsValue, Function) {
        let rec = recorder();
        (tab_open_recorded_js(&self.0, options, &rec).unwrap(), rec)
    }

    /// The tab's localStorage (the origin's): its writes reach the other pages as
    /// `storage` events.
    pub fn local(&self) -> web_sys::Storage {
        get(&self.window(), "localStorage").unchecked_into()
    }

    /// [`Tab::checkout`] with the getters and methods a test asks of it.
    pub fn open_checkout(&self, options: &JsValue) -> TabCheckout {
        TabCheckout(self.checkout(options))
    }

    /// Takes the Web Lock `name` in this tab, as its own submit would; returns the
    /// function that releases it.
    pub async fn hold_lock(&self, name: &str) -> Function {
        JsFuture::from(hold_lock_in_js(&self.window(), name))
            .await
            .unwrap()
            .into()
    }

    /// Closes the tab (its page ends, its locks go).
    pub fn close(&self) {
        tab_close_js(&self.0);
    }
}

/// `checkout.submit(payload)` of a tab's checkout, started: resolves with
/// `{ ok, status, key, fromCache, replayed, attempts, body }` or `{ error, message }`.
pub fn tab_submit(checkout: &JsValue, payload: &JsValue) -> Promise {
    tab_submit_js(checkout, payload)
}

/// A checkout of another page (a [`Tab`]'s).
pub struct TabCheckout(pub JsValue);

impl TabCheckout {
    fn string(&self, name: &str) -> String {
        get(&self.0, name)
            .as_string()
            .unwrap_or_else(|| panic!("{name} of the tab's checkout"))
    }

    /// `checkout.key`.
    pub fn key(&self) -> String {
        self.string("key")
    }

    /// `checkout.state`.
    pub fn state(&self) -> String {
        self.string("state")
    }

    /// `checkout.storage`.
    pub fn storage(&self) -> String {
        self.string("storage")
    }

    /// `checkout.attempts`.
    pub fn attempts(&self) -> f64 {
        get(&self.0, "attempts").as_f64().unwrap()
    }

    /// `checkout.submit(payload)`, settled: `{ ok, status, key, fromCache, attempts }` or
    /// `{ error, message }`.
    pub async fn submit(&self, payload: &JsValue) -> JsValue {
        JsFuture::from(tab_submit_js(&self.0, payload))
            .await
            .unwrap()
    }

    /// `checkout.finish()`: whether the end is durable.
    pub fn finish(&self) -> bool {
        tab_finish_js(&self.0)
    }

    /// The checkout of a page loaded after the attempt of key `finished` ended: it shows a
    /// new key, fresh, and the same basket paid there is charged under a new key, never
    /// answered from the attempt that ended. The key it was charged under.
    pub async fn pays_anew(&self, finished: &str) -> String {
        assert_ne!(
            self.key(),
            finished,
            "a later page shows the finished attempt"
        );
        assert_eq!(self.state(), "fresh");
        let r = self.submit(&js(PAY)).await;
        assert_eq!(num(&r, "status"), 201.0, "{r:?}");
        assert!(
            !flag(&r, "fromCache"),
            "answered from the finished attempt: {r:?}"
        );
        let key = text(&r, "key");
        assert_ne!(key, finished);
        key
    }
}

/// A getter of a tab's checkout (`key`, `state`, ...).
pub fn tab_get(checkout: &JsValue, name: &str) -> JsValue {
    get(checkout, name)
}
