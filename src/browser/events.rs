//! Events for `onEvent`: their fields here, the object built and delivered by `glue.js`
//! so that a throwing callback never breaks a submit (the error is logged with
//! `console.error`).

use js_sys::Function;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// `f({ type, ...fields, key })`, the fields named after `type`, their values `a`, `b`, `c`.
    #[wasm_bindgen(js_name = emit)]
    fn js_emit(f: &Function, type_: &str, key: &str, a: JsValue, b: JsValue, c: JsValue);
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
    /// The storage's connection was lost (or closed by the browser) and opened again; the
    /// request that found it so was made once more and went through.
    StorageReopened {
        /// The backend: `indexeddb`.
        backend: &'a str,
        /// The browser's error, e.g. `InvalidStateError: ...`.
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
        // A constant, not a clone of one value: each `JsValue::clone` is a call into JS.
        const NONE: JsValue = JsValue::UNDEFINED;
        let (t, a, b, c): (&str, JsValue, JsValue, JsValue) = match ev {
            Event::Attempt { attempt } => ("attempt", attempt.into(), NONE, NONE),
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => ("retry", attempt.into(), delay_ms.into(), reason.into()),
            Event::Response {
                attempt,
                status,
                replayed,
            } => ("response", attempt.into(), status.into(), replayed.into()),
            Event::State { state, previous } => ("state", state.into(), previous.into(), NONE),
            Event::StorageFallback { from, to, reason } => {
                ("storage-fallback", from.into(), to.into(), reason.into())
            }
            Event::StorageReopened { backend, reason } => {
                ("storage-reopened", backend.into(), reason.into(), NONE)
            }
            Event::StorageCorrupt {
                reason,
                quarantine_key,
            } => (
                "storage-corrupt",
                reason.into(),
                quarantine_key.into(),
                NONE,
            ),
        };
        js_emit(f, t, key, a, b, c);
    }
}
