//! The JavaScript surface: class `Checkout` and `newKey`, the TypeScript types wasm-bindgen
//! cannot write (api_types.rs), and the one conversion of an [`Error`] into a JS `Error`
//! (`name` "IdemError", `code`).
//!
//! Strings go out as `JsValue`s typed `string`: a `String` return costs each getter a
//! multi-value shim in the wasm and a copy-and-free wrapper in the generated glue.

use crate::prelude::*;
use alloc::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use crate::browser::ffi;
use crate::browser::host::BrowserHost;
use crate::browser::live::{next_id, to_js, LiveScope};
use crate::browser::options;
use crate::core::fingerprint::fingerprint_canonical;
use crate::core::machine::{new_key, Submitted};
use crate::core::options::Options;
use crate::error::Error;

#[path = "api_types.rs"]
mod types;

/// What JS sees of an [`Error`]: an `IdemError`.
impl From<Error> for JsValue {
    fn from(e: Error) -> JsValue {
        to_js(&e)
    }
}

/// One checkout attempt's key, kept across retries, double-clicks, refreshes and tabs.
/// Every `Checkout` of a scope in the page is a view of the scope's one machine: one key,
/// one state.
///
/// @example
/// const checkout = Checkout.open({ scope: "cart-42", endpoint: "/api/charges" });
#[wasm_bindgen]
pub struct Checkout {
    /// The scope in this page.
    live: Rc<LiveScope>,
    /// This checkout's own options: where and how its submits send.
    opts: Rc<Options>,
    /// Its number in the page, under which its `onEvent` is listed.
    id: u32,
}

/// A freed `Checkout` (`free()`, or the garbage collector) hears no more events.
impl Drop for Checkout {
    fn drop(&mut self) {
        self.live.close(self.id);
    }
}

#[wasm_bindgen]
impl Checkout {
    /// Opens (or resumes) the checkout of `options.scope`. A `Checkout` of the scope that
    /// is already open in the page is the same attempt: same key, state and attempts at
    /// every moment; each sends with its own options. Throws an `IdemError` with code
    /// `invalid-options` naming the option that is missing, unknown or out of range.
    /// Call `init()` first, and in the browser (a component's mount, not its render).
    ///
    /// @example
    /// const checkout = Checkout.open({ scope: `cart-${cart.id}`, endpoint: "/api/charges" });
    pub fn open(
        #[wasm_bindgen(unchecked_param_type = "CheckoutOptions")] options: JsValue,
    ) -> Result<Checkout, JsValue> {
        let (opts, on_event) = options::read(&options)?;
        let opts = Rc::new(opts);
        let id = next_id();
        Ok(Checkout {
            live: LiveScope::open(&opts, on_event, id),
            opts,
            id,
        })
    }

    /// Sends `payload` as JSON with this attempt's key, retrying as configured.
    /// Resolves with the final answer (also for non-2xx) or the stored one; rejects with
    /// `payload-conflict`, `outcome-unknown` or `invalid-payload`. A second call while one
    /// runs joins it; a call after a success of the same payload resolves with the stored
    /// answer (`fromCache`). On `outcome-unknown` tell the customer to press Pay again: the
    /// next call sends the same key.
    ///
    /// @example
    /// const r = await checkout.submit({ amount: 4200, currency: "EUR" });
    #[wasm_bindgen(unchecked_return_type = "Promise<SubmitResult>")]
    pub fn submit(
        &self,
        #[wasm_bindgen(unchecked_param_type = "unknown")] payload: JsValue,
    ) -> Promise {
        let prepared = prepare(&payload);
        let (body, fp) = match prepared {
            Ok(v) => v,
            Err(e) => return Promise::reject(&to_js(&e)),
        };
        let started = self
            .live
            .machine
            .borrow_mut()
            .submit(body, fp, self.opts.clone());
        let no = match started {
            Submitted::Joined(no) | Submitted::Started(no) => no,
            Submitted::Refused(e) => return Promise::reject(&to_js(&e)),
        };
        let p = self.live.promise(no);
        self.live.run();
        p
    }

    /// Abandons this attempt on purpose: new key, state "fresh", kept in the page until a
    /// submit stores it. Durable when it returns (`true`): whatever the page does next, no
    /// later page shows the attempt or answers the next order from it, and its key is not
    /// sent again. A submit called before it, in any tab, belongs to the attempt it ended:
    /// it resolves with that attempt's answer or rejects, and sends no new key. A submit of
    /// this tab stops before its next try (`outcome-unknown`, reason `abandoned`), and so
    /// does another tab's sending the old key; a try already on the wire ends as usual.
    /// `false` when Web Storage refused to keep the end for later pages (a
    /// `storage-fallback` event says why): give the next order a new scope. Only when the
    /// customer changes the order on purpose: never after `outcome-unknown`.
    ///
    /// @example
    /// checkout.reset(); // the customer changed the order: the next submit is a new attempt
    pub fn reset(&self) -> bool {
        let durable = self.live.machine.borrow_mut().reset();
        self.live.run();
        durable
    }

    /// Ends the attempt when the page moves on to the next order (not in the Pay handler:
    /// a late second click would start a new attempt). Durable when it returns (`true`):
    /// the page may navigate, reload or close at once, and no later page shows the finished
    /// attempt or answers the next order from it. The new key shows at once, in every
    /// `Checkout` of the scope in the page, and the next submit sends it. Like `reset()`, a
    /// submit called before it belongs to the finished attempt, the submits sending the old
    /// key stop before their next try, and `false` means the end holds in this page only.
    ///
    /// @example
    /// checkout.finish(); // on the receipt route, or behind a "New order" button
    pub fn finish(&self) -> bool {
        let durable = self.live.machine.borrow_mut().finish();
        self.live.run();
        durable
    }

    /// The getters' values (getters.js defines the getters, the TypeScript section above
    /// declares them): `n` is the getter's number in [`view`].
    #[wasm_bindgen(js_name = __view, skip_typescript)]
    pub fn view(&self, n: u32) -> JsValue {
        let m = self.live.machine.borrow();
        let r = m.record();
        match n {
            view::KEY => JsValue::from_str(&r.key),
            view::SCOPE => JsValue::from_str(&self.opts.scope),
            view::STATE => JsValue::from_str(r.state.as_str()),
            view::ATTEMPTS => r.attempts.into(),
            view::CREATED_AT => r.created_at.into(),
            view::EXPIRES_AT => r.expires_at.into(),
            _ => JsValue::from_str(m.storage().as_str()),
        }
    }
}

/// The numbers of [`Checkout::view`]'s values, in the order of getters.js's names. One
/// method with a number, not a getter each: each exported getter costs the wasm its own
/// borrow-checked entry and the glue its own wrapper (0.2 KiB gzipped for the seven).
mod view {
    pub const KEY: u32 = 0;
    pub const SCOPE: u32 = 1;
    pub const STATE: u32 = 2;
    pub const ATTEMPTS: u32 = 3;
    pub const CREATED_AT: u32 = 4;
    pub const EXPIRES_AT: u32 = 5;
}

/// The payload as canonical JSON text, the body sent, and its fingerprint (that text
/// hashed); `invalid-payload` when JSON cannot carry it.
fn prepare(payload: &JsValue) -> crate::error::Result<(String, String)> {
    let v = ffi::stringify(payload);
    let Some(body) = ffi::text(&v) else {
        let why = v.unchecked_ref::<js_sys::Array>().get(0);
        return Err(Error::InvalidPayload(ffi::text(&why).unwrap_or_default()));
    };
    let fp = fingerprint_canonical(&body);
    Ok((body, fp))
}

/// A fresh UUID v4, from `crypto.getRandomValues`, e.g. for a scope of your own.
///
/// @example
/// const orderDraftId = newKey();
#[wasm_bindgen(js_name = newKey, unchecked_return_type = "string")]
pub fn new_key_js() -> JsValue {
    JsValue::from_str(&new_key_string())
}

/// A fresh UUID v4, for Rust callers.
pub fn new_key_string() -> String {
    new_key(&mut BrowserHost)
}

/// The getters' values for Rust callers.
impl Checkout {
    /// This attempt's idempotency key (UUID v4).
    pub fn key(&self) -> String {
        self.live.machine.borrow().record().key.clone()
    }

    /// The scope this checkout was opened for.
    pub fn scope(&self) -> String {
        self.opts.scope.clone()
    }

    /// "fresh", "pending", "succeeded" or "failed".
    pub fn state(&self) -> String {
        self.live.machine.borrow().record().state.as_str().into()
    }

    /// Where this tab's copy of the record is (after any fallback): "local", "session", "memory".
    pub fn storage(&self) -> String {
        self.live.machine.borrow().storage().as_str().into()
    }

    /// HTTP tries sent for this key so far (persisted).
    pub fn attempts(&self) -> u32 {
        self.live.machine.borrow().record().attempts
    }

    /// When this key was made, in ms since the epoch.
    pub fn created_at(&self) -> f64 {
        self.live.machine.borrow().record().created_at
    }

    /// When this key stops being reused, in ms since the epoch.
    pub fn expires_at(&self) -> f64 {
        self.live.machine.borrow().record().expires_at
    }
}
