//! The JavaScript surface: class `Checkout`, `newKey`, `sweep`, the TypeScript types, and
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
use crate::browser::live::{next_id, sweep_idb, to_js, LiveScope};
use crate::browser::options;
use crate::core::fingerprint::fingerprint;
use crate::core::machine::{mirror, new_key, sweep_backend, Submitted};
use crate::core::options::{validate_namespace, Options, DEFAULT_NAMESPACE};
use crate::error::Error;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Where a checkout attempt stands. */
export type CheckoutState = "fresh" | "pending" | "succeeded" | "failed";
/** Where a record lives. */
export type StorageKind = "local" | "session" | "memory";
/** The `code` of an {@link IdemError}. */
export type IdemErrorCode = "invalid-options" | "payload-conflict" | "outcome-unknown" | "invalid-payload"
  | "wasm-blocked" | "wasm-integrity" | "freed";
/** What `Checkout.open` throws and `submit` rejects with. */
export interface IdemError extends Error {
  name: "IdemError";
  code: IdemErrorCode;
  /** With `outcome-unknown`: why. The last try's failure (`timeout`, `network-error`,
   * `status-503`, ...); `abandoned` when `reset()`, `finish()` or another tab moved the scope
   * to a new key; `another-tab` when another tab held the checkout for the whole
   * `deadlineMs` and nothing was sent from this one. */
  reason?: string;
}
/** Options of `Checkout.open`; only `scope` and `endpoint` are required. */
export interface CheckoutOptions {
  /** The logical checkout (cart id, order draft id), 1 to 200 characters. */
  scope: string;
  /** Where `submit()` sends. */
  endpoint: string;
  /** Default "POST". */
  method?: "POST" | "PUT" | "PATCH" | "DELETE";
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Default "Idempotency-Key". */
  headerName?: string;
  /** "plain" (default, Stripe style) or "sf-string" (IETF draft: quoted). */
  headerFormat?: "plain" | "sf-string";
  /** A key older than this is never reused. Default 86400. */
  ttlSeconds?: number;
  /** Per try. Default 10000. */
  timeoutMs?: number;
  /** Tries after the first. Default 5. */
  maxRetries?: number;
  /** Exponential backoff with full jitter. Default { baseMs: 250, maxMs: 10000 }. */
  backoff?: { baseMs?: number; maxMs?: number };
  /** The whole submit's budget. Default 60000. */
  deadlineMs?: number;
  /** Default "local"; falls back local -> session -> memory when storage throws. */
  storage?: StorageKind;
  /** Storage keys start with `${namespace}:`. Default "idemkey". */
  namespace?: string;
  /** fetch credentials. Default "same-origin". */
  credentials?: "omit" | "same-origin" | "include";
  /** Called for every event; exceptions it throws are logged, never rethrown. */
  onEvent?: (event: IdemEvent) => void;
}
/** What `submit()` resolves with: the final HTTP answer (2xx or not) or the stored one. */
export interface SubmitResult {
  /** The idempotency key this answer belongs to. */
  key: string;
  /** The HTTP status of the final (or stored) answer. */
  status: number;
  /** `status` is 2xx. */
  ok: boolean;
  /** Parsed JSON, else the text; null when empty. */
  body: unknown;
  /** The server answered `Idempotent-Replayed: true`. */
  replayed: boolean;
  /** Resolved from the stored result without sending. */
  fromCache: boolean;
  /** HTTP tries sent for this key so far. */
  attempts: number;
}
/** Why a try is retried: no answer in `timeoutMs`, no answer at all, or a retryable status. */
export type RetryReason = "timeout" | "network-error" | `status-${number}`;
/** Events passed to `onEvent`, told apart by `type`. */
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
    pub fn open(
        #[wasm_bindgen(unchecked_param_type = "CheckoutOptions")] options: JsValue,
    ) -> Result<Checkout, JsValue> {
        let (opts, on_event) = options::read(&options)?;
        let id = next_id();
        Ok(Checkout {
            live: LiveScope::open(&opts, on_event, id),
            opts: Rc::new(opts),
            id,
        })
    }

    /// Sends `payload` as JSON with this attempt's key, retrying as configured.
    /// Resolves with the final answer (also for non-2xx) or the stored one; rejects with
    /// `payload-conflict`, `outcome-unknown` or `invalid-payload`.
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
    /// a newer attempt by then, that one is kept and shown instead.
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
    pub fn finish(&self) {
        self.live.machine.borrow_mut().finish();
        self.live.run();
    }

    /// This attempt's idempotency key (UUID v4).
    #[wasm_bindgen(getter, js_name = key, unchecked_return_type = "string")]
    pub fn key_js(&self) -> JsValue {
        JsValue::from_str(&self.key())
    }

    /// The scope this checkout was opened for.
    #[wasm_bindgen(getter, js_name = scope, unchecked_return_type = "string")]
    pub fn scope_js(&self) -> JsValue {
        JsValue::from_str(&self.opts.scope)
    }

    /// "fresh", "pending", "succeeded" or "failed".
    #[wasm_bindgen(getter, js_name = state, unchecked_return_type = "CheckoutState")]
    pub fn state_js(&self) -> JsValue {
        JsValue::from_str(self.live.machine.borrow().record().state.as_str())
    }

    /// HTTP tries sent for this key so far (persisted).
    #[wasm_bindgen(getter)]
    pub fn attempts(&self) -> u32 {
        self.live.machine.borrow().record().attempts
    }

    /// When this key was made, in ms since the epoch.
    #[wasm_bindgen(getter, js_name = createdAt)]
    pub fn created_at(&self) -> f64 {
        self.live.machine.borrow().record().created_at
    }

    /// When this key stops being reused, in ms since the epoch.
    #[wasm_bindgen(getter, js_name = expiresAt)]
    pub fn expires_at(&self) -> f64 {
        self.live.machine.borrow().record().expires_at
    }

    /// Where this tab's copy of the record is (after any fallback): "local", "session", "memory".
    #[wasm_bindgen(getter, js_name = storage, unchecked_return_type = "StorageKind")]
    pub fn storage_js(&self) -> JsValue {
        JsValue::from_str(self.live.machine.borrow().storage().as_str())
    }
}

/// The payload as JSON text and its fingerprint (core's canonical JSON of it, hashed);
/// `invalid-payload` when JSON cannot carry it.
fn prepare(payload: &JsValue) -> crate::error::Result<(String, String)> {
    let v = ffi::stringify(payload);
    let Some(body) = ffi::text(&v) else {
        let why = js_sys::Array::from(&v).get(0);
        return Err(Error::InvalidPayload(ffi::text(&why).unwrap_or_default()));
    };
    let fp = fingerprint(&body)?;
    Ok((body, fp))
}

/// A fresh UUID v4.
#[wasm_bindgen(js_name = newKey, unchecked_return_type = "string")]
pub fn new_key_js() -> JsValue {
    JsValue::from_str(&new_key_string())
}

/// A fresh UUID v4, for Rust callers.
pub fn new_key_string() -> String {
    new_key(&mut BrowserHost)
}

/// The getters' values for Rust callers (the browser tests), as `String`s.
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
}

/// Deletes the expired records of `namespace` (default "idemkey") from local, session and
/// memory storage, and the unreadable records set aside more than 7 days ago; returns how
/// many. Their IndexedDB copies are deleted too, in the background (not counted). Throws
/// `invalid-options` for a bad namespace.
#[wasm_bindgen]
pub fn sweep(namespace: Option<String>) -> Result<u32, JsValue> {
    let ns = namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
    validate_namespace(ns)?;
    let mut prefix = String::from(ns);
    prefix.push(':');
    sweep_idb(&prefix, ns.into());
    Ok(mirror::ALL
        .into_iter()
        .map(|k| sweep_backend(&mut BrowserHost, k, ns))
        .sum())
}
