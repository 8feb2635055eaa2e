//! Events for `onEvent`: their fields here, the object built and delivered by `glue.js`
//! so that a throwing callback never breaks a submit (the error is logged with
//! `console.error`).

use crate::prelude::*;
use js_sys::Function;

use super::cell::Slot;
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
    /// The key this page shows changed without a `reset()` or `finish()` of this page:
    /// another tab's key won the race to open the scope, another tab started a new
    /// attempt or finished this one, the record expired, or a new attempt followed a
    /// failed one.
    KeyChanged {
        /// The key shown before.
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

/// Delivers a scope's events to the `onEvent` of every open `Checkout` of the scope in
/// this page, each listed under the checkout's number until the checkout is freed.
#[derive(Default)]
pub(crate) struct Emitter(Slot<Vec<(u32, Function)>>);

impl Emitter {
    /// Lists `f` as the `onEvent` of checkout `id`.
    pub(crate) fn add(&self, id: u32, f: Function) {
        self.0.borrow_mut().push((id, f));
    }

    /// Takes checkout `id`'s `onEvent` off the list.
    pub(crate) fn remove(&self, id: u32) {
        self.0.borrow_mut().retain(|(i, _)| *i != id);
    }

    /// Calls each `onEvent({ type, key, ... })`; exceptions are caught and logged. The list
    /// is copied first: a callback may open or free a checkout of the scope.
    pub(crate) fn emit(&self, key: &str, ev: Event) {
        let listeners: Vec<Function> = self.0.borrow().iter().map(|(_, f)| f.clone()).collect();
        if listeners.is_empty() {
            return;
        }
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
            Event::KeyChanged { previous } => ("key-changed", previous.into(), NONE, NONE),
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
        for f in &listeners {
            js_emit(f, t, key, a.clone(), b.clone(), c.clone());
        }
    }
}
