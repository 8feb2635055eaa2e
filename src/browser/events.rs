//! Events for `onEvent`: built as plain objects, delivered so that a throwing callback
//! never breaks a submit (the error is logged with `console.error`).

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::js::Obj;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(a: &JsValue, b: &JsValue);
}

/// One event, without the `key` every event carries.
pub(crate) enum Event<'a> {
    /// A try is about to be sent; `attempt` counts tries for this key (persisted).
    Attempt {
        /// 1-based try number for this key.
        attempt: u32,
    },
    /// A try failed in a retryable way; the next try follows after `delay_ms`.
    Retry {
        /// The try that failed.
        attempt: u32,
        /// Wait before the next try.
        delay_ms: u32,
        /// `timeout`, `network-error` or `status-NNN`.
        reason: &'a str,
    },
    /// A try got an HTTP response (final or retryable).
    Response {
        /// The try that got it.
        attempt: u32,
        /// HTTP status.
        status: u16,
        /// The server said `Idempotent-Replayed: true`.
        replayed: bool,
    },
    /// The record's state changed (here or, via the `storage` event, in another tab).
    State {
        /// The new state.
        state: &'a str,
        /// The state before.
        previous: &'a str,
    },
    /// The storage backend failed and the record moved to the next one.
    StorageFallback {
        /// The failed backend.
        from: &'a str,
        /// The backend now in use.
        to: &'a str,
        /// The browser's error, e.g. `QuotaExceededError: ...`.
        reason: &'a str,
    },
    /// A stored record could not be read; it was moved to `quarantine_key`.
    StorageCorrupt {
        /// Why it could not be read.
        reason: &'a str,
        /// Where the unreadable text now lives.
        quarantine_key: &'a str,
    },
}

/// Delivers events to the page's `onEvent`, if any.
#[derive(Clone, Default)]
pub(crate) struct Emitter(pub(crate) Option<Function>);

impl Emitter {
    /// Calls `onEvent({ type, key, ... })`; exceptions are caught and logged.
    pub(crate) fn emit(&self, key: &str, ev: Event) {
        let Some(f) = &self.0 else { return };
        let o = Obj::new();
        let o = match ev {
            Event::Attempt { attempt } => o.set("type", "attempt").set("attempt", attempt),
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => o
                .set("type", "retry")
                .set("attempt", attempt)
                .set("delayMs", delay_ms)
                .set("reason", reason),
            Event::Response {
                attempt,
                status,
                replayed,
            } => o
                .set("type", "response")
                .set("attempt", attempt)
                .set("status", status)
                .set("replayed", replayed),
            Event::State { state, previous } => o
                .set("type", "state")
                .set("state", state)
                .set("previous", previous),
            Event::StorageFallback { from, to, reason } => o
                .set("type", "storage-fallback")
                .set("from", from)
                .set("to", to)
                .set("reason", reason),
            Event::StorageCorrupt {
                reason,
                quarantine_key,
            } => o
                .set("type", "storage-corrupt")
                .set("reason", reason)
                .set("quarantineKey", quarantine_key),
        };
        let ev = o.set("key", key).done();
        if let Err(e) = f.call1(&JsValue::UNDEFINED, &ev) {
            console_error(&JsValue::from_str("idemkey: onEvent threw"), &e);
        }
    }
}
