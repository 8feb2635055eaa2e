//! The page's live scopes: each one's machine (the scope's one owner in the page; every
//! `Checkout` of the scope is a view of it), the driver's state for it, and the `onEvent`s
//! of its checkouts. Runs the commands the machine gives, one by one, each through the
//! driver; a scope no `Checkout` uses and with no work left is let go.

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::ffi::{self, Feed, PageCell};
use super::host::BrowserHost;
use crate::core::machine::{Command, Event, EventKind, Input, Reply, Scope};
use crate::core::options::{Options, StorageKind};
use crate::core::record::record_key;
use crate::error::Error;

/// The scopes of this page that are in use.
static OPEN: PageCell<Vec<Rc<LiveScope>>> = PageCell::new(Vec::new());

/// The namespaces this page has swept, each as `{namespace}:{storage}` (once per page load
/// and backend is enough for records that live for hours).
static SWEPT: PageCell<Vec<String>> = PageCell::new(Vec::new());

/// The number of the last `Checkout` made in this page.
static LAST_ID: PageCell<u32> = PageCell::new(0);

/// A number for a new `Checkout`, never given before in this page.
pub(crate) fn next_id() -> u32 {
    LAST_ID.with(|last| {
        *last += 1;
        *last
    })
}

/// One scope in use in this page.
pub(crate) struct LiveScope {
    /// The scope's machine.
    pub(crate) machine: RefCell<Scope<BrowserHost>>,
    /// The driver's state for it.
    driver: RefCell<JsValue>,
    /// The `onEvent` of each open `Checkout` of the scope, by its number.
    listeners: RefCell<Vec<(u32, Function)>>,
    /// How many `Checkout`s use it.
    checkouts: Cell<u32>,
    /// `storage` as asked for (before any fallback): part of what the scope is.
    wanted: StorageKind,
}

impl LiveScope {
    /// The scope of `opts` for the `Checkout` numbered `id`: the page's live one if there
    /// is one (opened again), else a new one.
    pub(crate) fn open(opts: &Rc<Options>, on_event: Option<Function>, id: u32) -> Rc<LiveScope> {
        let at = record_key(&opts.namespace, &opts.scope);
        let found = OPEN.with(|open| {
            open.iter()
                .find(|l| l.wanted == opts.storage && l.machine.borrow().rec_key() == at)
                .cloned()
        });
        let live = match found {
            Some(live) => {
                live.machine.borrow_mut().reopen();
                live
            }
            None => {
                let mut swept = opts.namespace.clone();
                swept.push(':');
                swept.push_str(opts.storage.as_str());
                let sweep = SWEPT.with(|s| {
                    let first = !s.contains(&swept);
                    if first {
                        s.push(swept);
                    }
                    first
                });
                let live = Rc::new(LiveScope {
                    machine: RefCell::new(Scope::open(BrowserHost, opts.clone(), sweep)),
                    driver: RefCell::new(JsValue::NULL),
                    listeners: RefCell::new(Vec::new()),
                    checkouts: Cell::new(0),
                    wanted: opts.storage,
                });
                *live.driver.borrow_mut() = ffi::attach_machine(live.clone());
                OPEN.with(|open| open.push(live.clone()));
                live
            }
        };
        live.checkouts.set(live.checkouts.get() + 1);
        if let Some(f) = on_event {
            live.listeners.borrow_mut().push((id, f));
        }
        live.run();
        live
    }

    /// The promise of submit sequence `no`.
    pub(crate) fn promise(&self, no: u32) -> js_sys::Promise {
        ffi::promise(&self.driver.borrow(), no)
    }

    /// The `Checkout` numbered `id` is freed: it hears no more events.
    pub(crate) fn close(self: &Rc<Self>, id: u32) {
        self.listeners.borrow_mut().retain(|(i, _)| *i != id);
        self.checkouts.set(self.checkouts.get() - 1);
        self.let_go();
    }

    /// Runs the machine's commands in order. The machine is not borrowed while one runs:
    /// an `onEvent` may call back into the checkout.
    pub(crate) fn run(&self) {
        loop {
            let Some(c) = self.machine.borrow_mut().poll() else {
                break;
            };
            self.dispatch(c);
        }
        self.let_go();
    }

    /// A scope no `Checkout` uses and with no work left leaves the page's registry, and
    /// the driver lets it go.
    fn let_go(&self) {
        if self.checkouts.get() > 0 || self.machine.borrow().kept() {
            return;
        }
        let mine = OPEN.with(|open| {
            let before = open.len();
            open.retain(|l| !core::ptr::eq(Rc::as_ptr(l), self));
            open.len() != before
        });
        if mine {
            ffi::detach(&self.driver.borrow());
        }
    }

    fn dispatch(&self, c: Command) {
        // Borrowed, not cloned (a clone is a call into JS): only `open()` writes it, before any run.
        let d = self.driver.borrow();
        match c {
            Command::Lock { name } => ffi::lock(&d, &name),
            Command::Unlock => ffi::unlock(&d),
            Command::IdbGet { key } => ffi::idb_get(&d, &key, false),
            Command::IdbPeek { key } => ffi::idb_get(&d, &key, true),
            Command::IdbPut { key, text } => ffi::idb_put(&d, &key, text.as_deref()),
            Command::IdbSweep { prefix } => ffi::idb_sweep(&d, &prefix),
            Command::Send(r) => ffi::send(
                &d,
                &r.send.endpoint,
                &r.send.method,
                &joined(&r.send.headers),
                &r.send.header_name,
                &r.key_value,
                &r.body,
                &r.send.credentials,
                r.timeout_ms,
            ),
            Command::Wake { ms, wake } => ffi::wake(&d, ms, ffi::wake_code(wake)),
            Command::Emit(e) => self.emit(e),
            Command::Settle { flight, outcome } => {
                let (ok, value) = match outcome {
                    Ok(r) => (true, reply(&r)),
                    Err(e) => (false, to_js(&e)),
                };
                ffi::settle(&d, flight, ok, &value);
            }
            Command::Post { name, text } => ffi::post(&d, &name, &text),
            Command::Listen { name, area } => ffi::listen(&d, &name, area as u32),
        }
    }

    /// Delivers `e` to the `onEvent` of every open `Checkout` of the scope (a copy of the
    /// list: a callback may open or free a checkout).
    fn emit(&self, e: Event) {
        let fs = ffi::functions(&self.listeners.borrow());
        if fs.length() == 0 {
            return;
        }
        const NONE: JsValue = JsValue::UNDEFINED;
        let s = |v: &str| JsValue::from_str(v);
        let (t, n1, v1, n2, v2, n3, v3): (&str, &str, JsValue, &str, JsValue, &str, JsValue) =
            match e.kind {
                EventKind::Attempt { attempt } => {
                    ("attempt", "attempt", attempt.into(), "", NONE, "", NONE)
                }
                EventKind::Retry {
                    attempt,
                    delay_ms,
                    reason,
                } => (
                    "retry",
                    "attempt",
                    attempt.into(),
                    "delayMs",
                    delay_ms.into(),
                    "reason",
                    s(&reason),
                ),
                EventKind::Response {
                    attempt,
                    status,
                    replayed,
                } => (
                    "response",
                    "attempt",
                    attempt.into(),
                    "status",
                    status.into(),
                    "replayed",
                    replayed.into(),
                ),
                EventKind::State { state, previous } => (
                    "state",
                    "state",
                    s(state),
                    "previous",
                    s(previous),
                    "",
                    NONE,
                ),
                EventKind::KeyChanged { previous } => {
                    ("key-changed", "previous", s(&previous), "", NONE, "", NONE)
                }
                EventKind::StorageFallback { from, to, reason } => (
                    "storage-fallback",
                    "from",
                    s(from),
                    "to",
                    s(to),
                    "reason",
                    s(&reason),
                ),
                EventKind::StorageReopened { reason } => (
                    "storage-reopened",
                    "backend",
                    s("indexeddb"),
                    "reason",
                    s(&reason),
                    "",
                    NONE,
                ),
                EventKind::StorageCorrupt {
                    reason,
                    quarantine_key,
                } => (
                    "storage-corrupt",
                    "reason",
                    s(&reason),
                    "quarantineKey",
                    s(&quarantine_key),
                    "",
                    NONE,
                ),
            };
        ffi::emit(&fs, t, &e.key, n1, v1, n2, v2, n3, v3);
    }
}

impl Feed for LiveScope {
    fn feed(&self, input: Input) {
        self.machine.borrow_mut().handle(input);
        self.run();
    }

    fn due(&self, key: &str, value: &str) -> bool {
        self.machine.borrow_mut().due(key, value)
    }
}

/// What `submit()` resolves with.
fn reply(r: &Reply) -> JsValue {
    ffi::result(
        &r.key,
        r.status,
        &r.body,
        r.replayed,
        r.from_cache,
        r.attempts,
    )
}

/// The one conversion of an idemkey error into what JS sees: an `Error` with
/// `name === "IdemError"`, a stable `code`, the message, and with `outcome-unknown` its
/// `reason`.
pub(crate) fn to_js(e: &Error) -> JsValue {
    let reason = match e {
        Error::OutcomeUnknown { reason, .. } => reason.as_str(),
        _ => "",
    };
    ffi::idem_error(&e.message(), e.code(), reason)
}

/// Extra headers as the driver takes them: names and values joined by "\n" (validated
/// options contain no CR, LF or NUL).
pub(crate) fn joined(headers: &[(String, String)]) -> String {
    let mut s = String::new();
    for (k, v) in headers {
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(k);
        s.push('\n');
        s.push_str(v);
    }
    s
}
