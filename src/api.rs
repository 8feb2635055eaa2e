//! The JavaScript surface: class `Checkout`, `newKey`, the TypeScript types, and
//! the one conversion of [`Error`] into a JS `Error` (`name` "IdemError", `code`).
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

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/**
 * Where a checkout attempt stands: `"fresh"` (nothing sent under its key yet), `"pending"`
 * (sent; the outcome is not known yet, or was not when the last submit gave up),
 * `"succeeded"` (a 2xx answer is stored) or `"failed"` (a final non-2xx answer is stored;
 * the next submit starts a new attempt with a new key).
 */
export type CheckoutState = "fresh" | "pending" | "succeeded" | "failed";
/**
 * Where a record lives: `"local"` (IndexedDB with a copy in localStorage, shared by every
 * tab of the origin), `"session"` (this tab, across its refreshes) or `"memory"` (this page).
 */
export type StorageKind = "local" | "session" | "memory";
/**
 * The `code` of an {@link IdemError}: `invalid-options` (from `Checkout.open`),
 * `payload-conflict`, `outcome-unknown` and `invalid-payload` (from `submit`),
 * `wasm-blocked` and `wasm-integrity` (from `init`), `freed` (a freed `Checkout` used).
 */
export type IdemErrorCode = "invalid-options" | "payload-conflict" | "outcome-unknown" | "invalid-payload"
  | "wasm-blocked" | "wasm-integrity" | "freed";
/**
 * What `Checkout.open` throws, `init` and `submit` reject with, and a freed `Checkout`
 * throws: an `Error` told apart by its `name`, with a `code`.
 * @example
 * catch (err) { if (err.name === "IdemError" && err.code === "outcome-unknown") showPressAgain(); }
 */
export interface IdemError extends Error {
  /** Always `"IdemError"`. */
  name: "IdemError";
  /**
   * What went wrong. `outcome-unknown`: the payment may or may not have happened and the
   * key is kept, so tell the customer to press Pay again (never `reset()` then).
   */
  code: IdemErrorCode;
  /** With `outcome-unknown`: why. The last try's failure (`timeout`, `network-error`,
   * `status-503`, ...); `abandoned` when `reset()`, `finish()` or another tab moved the scope
   * to a new key; `another-tab` when another tab held the checkout for the whole
   * `deadlineMs` and nothing was sent from this one; `deadline` when the browser ran the
   * first try so late (a frozen tab thawed) that the budget was over, and it was not sent.
   * @example if (e.code === "outcome-unknown" && e.reason === "another-tab") showOpenElsewhere(); */
  reason?: string;
}
/**
 * Options of `Checkout.open`; only `scope` and `endpoint` are required. A missing, unknown
 * or out-of-range option throws the `invalid-options` IdemError naming it.
 * @example
 * Checkout.open({ scope: `cart-${cart.id}`, endpoint: "/api/charges" })
 */
export interface CheckoutOptions {
  /**
   * The logical checkout, 1 to 200 characters: one record and one key at a time. Give
   * each order its own (a cart id, an order draft id).
   * @example scope: `cart-${cart.id}`
   */
  scope: string;
  /** Where `submit()` sends, e.g. `"/api/charges"`; another origin must allow it by CORS. */
  endpoint: string;
  /** The HTTP method. Default `"POST"`. */
  method?: "POST" | "PUT" | "PATCH" | "DELETE";
  /**
   * Extra request headers, not the key's own; `Content-Type: application/json` is sent
   * unless set here. Default `{}`.
   * @example headers: { Authorization: `Bearer ${token}` }
   */
  headers?: Record<string, string>;
  /** The key's header, an HTTP token. Default `"Idempotency-Key"`; e.g. `"PayPal-Request-Id"`. */
  headerName?: string;
  /**
   * `"plain"` sends the bare key (Stripe style, the default); `"sf-string"` quotes it as a
   * structured-field string (the IETF draft).
   */
  headerFormat?: "plain" | "sf-string";
  /** A key older than this many seconds is never reused: 1 to 31536000, default 86400 (24 h). */
  ttlSeconds?: number;
  /**
   * Each try's timeout in ms, 1 to 600000, default 10000. A timed-out try is an unknown
   * outcome, retried with the same key.
   */
  timeoutMs?: number;
  /** Tries after the first, 0 to 100. Default 5. */
  maxRetries?: number;
  /**
   * Exponential backoff with full jitter: a random wait up to `min(maxMs, baseMs * 2^n)`;
   * a server's `Retry-After` replaces it. Integers 0 to 3600000, `baseMs <= maxMs`.
   * Default `{ baseMs: 250, maxMs: 10000 }`.
   */
  backoff?: { /** The first retry's longest wait, ms. */ baseMs?: number; /** No wait is longer, ms. */ maxMs?: number };
  /**
   * One `submit()`'s budget for its tries and waits, in ms from its first try: 1 to
   * 86400000, default 60000. When it is used up, `submit()` rejects with `outcome-unknown`.
   */
  deadlineMs?: number;
  /**
   * Where the record lives. Default `"local"`, shared by every tab; storage that throws
   * falls back local -> session -> memory, with a `storage-fallback` event.
   */
  storage?: StorageKind;
  /** Storage keys start with `${namespace}:`: 1 to 64 characters, no `:`. Default `"idemkey"`. */
  namespace?: string;
  /** As `fetch`'s `credentials`. Default `"same-origin"`. */
  credentials?: "omit" | "same-origin" | "include";
  /**
   * Called for every event of the attempt; what it throws is logged, never rethrown.
   * @example onEvent: (e) => console.debug("idemkey", e.type, e.key)
   */
  onEvent?: (event: IdemEvent) => void;
}
/**
 * What a {@link Checkout} shows of its attempt, at every moment: the same in every
 * `Checkout` of the scope in the page.
 */
export interface Checkout {
  /**
   * This attempt's idempotency key (UUID v4), the one every try sends, kept until
   * `finish()`, `reset()`, a final failure or `ttlSeconds`.
   */
  readonly key: string;
  /** The scope this checkout was opened for. */
  readonly scope: string;
  /** "fresh", "pending", "succeeded" or "failed"; follows other tabs too (`state` events). */
  readonly state: CheckoutState;
  /** HTTP tries sent for this key so far (persisted). */
  readonly attempts: number;
  /** When this key was made, in ms since the epoch. */
  readonly createdAt: number;
  /** When this key stops being reused, in ms since the epoch. */
  readonly expiresAt: number;
  /** Where this tab's copy of the record is (after any fallback): "local", "session", "memory". */
  readonly storage: StorageKind;
}
/**
 * What `submit()` resolves with: the final HTTP answer, 2xx or not (like `fetch`), or the
 * stored one.
 * @example
 * const r = await checkout.submit(order); show(r.ok ? "Paid" : `Declined (${r.status})`);
 */
export interface SubmitResult {
  /** The idempotency key this answer belongs to. */
  key: string;
  /** The HTTP status of the final (or stored) answer. */
  status: number;
  /** `status` is 2xx: the attempt is `"succeeded"`. */
  ok: boolean;
  /** The response body: parsed JSON, else the text; null when empty. */
  body: unknown;
  /** The server answered `Idempotent-Replayed: true`: an earlier try had done the work. */
  replayed: boolean;
  /** Resolved from the stored answer (a click after the answer, another tab's answer): nothing sent. */
  fromCache: boolean;
  /** HTTP tries sent for this key so far, by every page and tab. */
  attempts: number;
}
/** Why a try is retried: no answer in `timeoutMs`, no answer at all, or a retryable status (`"status-503"`). */
export type RetryReason = "timeout" | "network-error" | `status-${number}`;
/**
 * Events passed to `onEvent`, told apart by `type`; each carries the attempt's `key`.
 * `attempt`: a try is about to be sent. `retry`: a try failed in a retryable way and the
 * next comes after `delayMs`. `response`: a try got an HTTP answer. `state`: the record's
 * state changed, here or in another tab. `key-changed`: `checkout.key` changed without a
 * `reset()` or `finish()` of this page. `storage-fallback`: storage threw and the record
 * moved down. `storage-reopened`: IndexedDB's lost connection was opened again, nothing
 * lost. `storage-corrupt`: an unreadable record was set aside under `quarantineKey`.
 */
export type IdemEvent =
  | { type: "attempt"; key: string; attempt: number }
  | { type: "retry"; key: string; attempt: number; delayMs: number; reason: RetryReason }
  | { type: "response"; key: string; attempt: number; status: number; replayed: boolean }
  | { type: "state"; key: string; state: CheckoutState; previous: CheckoutState }
  | { type: "key-changed"; key: string; previous: string }
  | { type: "storage-fallback"; key: string; from: StorageKind | "indexeddb"; to: StorageKind; reason: string }
  | { type: "storage-reopened"; key: string; backend: "indexeddb"; reason: string }
  | { type: "storage-corrupt"; key: string; reason: string; quarantineKey: string };
"#;

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

    /// Abandons this attempt on purpose: new key, state "fresh". Durable when it returns:
    /// whatever the page does next, no later page shows or answers from the attempt, and
    /// its key is not sent again. The new key shows at once;
    /// a submit of this tab stops before its next try (`outcome-unknown`, reason
    /// `abandoned`), and so does another tab's sending the old key. The new record is stored
    /// once this tab holds the scope's lock, after a try already on the wire has ended
    /// (its answer is stored and its submit resolves); if another tab has moved the scope to
    /// a newer attempt by then, that one is kept and shown instead. Only when the customer
    /// changes the order on purpose: never after `outcome-unknown`.
    ///
    /// @example
    /// checkout.reset(); // the customer changed the order: the next submit is a new attempt
    pub fn reset(&self) {
        self.live.machine.borrow_mut().reset();
        self.live.run();
    }

    /// Forgets the record when the page moves on to the next order (not in the Pay
    /// handler: a late second click would start a new attempt). Durable when it returns:
    /// the page may navigate, reload or close at once, and no later page shows or answers
    /// from the finished attempt. The new key shows at once,
    /// in every `Checkout` of the scope in the page, and the next submit sends it. Like
    /// `reset()`, it stops the submits sending the old key before their next try and takes
    /// effect with the scope's lock, after a try already on the wire; another tab's newer
    /// attempt is kept.
    ///
    /// @example
    /// checkout.finish(); // on the receipt route, or behind a "New order" button
    pub fn finish(&self) {
        self.live.machine.borrow_mut().finish();
        self.live.run();
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
