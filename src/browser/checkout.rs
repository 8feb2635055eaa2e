//! One checkout's live state: options, storage, the record as this tab knows it, the
//! in-flight submit, and the `storage` listener that keeps the record current across tabs.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use web_sys::StorageEvent;

use super::clock::now_ms;
use super::events::{Emitter, Event};
use super::storage::{self, Fallback, Store};
use crate::core::options::{Options, StorageKind};
use crate::core::record::{quarantine_key, record_key, sweep_due, Record};
use crate::core::state::State;

/// A fresh UUID v4 (formatted without `core::fmt`).
pub(crate) fn new_key() -> String {
    let mut buf = [0u8; 36];
    uuid::Uuid::new_v4()
        .hyphenated()
        .encode_lower(&mut buf)
        .to_owned()
}

/// Deletes from the given backends what core's `sweep_due` says: the expired records of
/// `namespace` and its quarantined copies past their retention; returns how many.
pub(crate) fn sweep_kinds(kinds: &[StorageKind], namespace: &str) -> u32 {
    let mut prefix = String::from(namespace);
    prefix.push(':');
    let now = now_ms();
    storage::remove_where(kinds, &prefix, |k, v| sweep_due(namespace, k, v, now))
}

/// The `storage` event listener, kept to remove it when the checkout is freed.
type Listener = Closure<dyn FnMut(StorageEvent)>;

/// Shared by the JS `Checkout` object and its running submits.
pub(crate) struct Inner {
    /// Validated options.
    pub(crate) opts: Options,
    /// Where the record lives.
    pub(crate) store: Rc<Store>,
    /// `onEvent`.
    pub(crate) events: Emitter,
    /// The record as this tab knows it.
    pub(crate) rec: RefCell<Record>,
    /// The record's storage key.
    pub(crate) rec_key: String,
    /// The submit in flight: payload fingerprint, its promise, its number (single flight).
    pub(crate) inflight: RefCell<Option<(String, Promise, u32)>>,
    /// Submit sequences started so far (numbers the in-flight one).
    pub(crate) flights: Cell<u32>,
    listener: RefCell<Option<Listener>>,
}

impl Inner {
    /// Opens the scope: picks the storage (with fallbacks), sweeps it (expired records,
    /// quarantined copies past their retention), loads
    /// or creates the record (setting an unreadable one aside) and writes it back.
    pub(crate) fn open(opts: Options, on_event: Option<Function>) -> Rc<Inner> {
        let mut fallbacks = Vec::new();
        let mut probe = String::from(opts.namespace.as_str());
        probe.push_str(":probe");
        let store = Rc::new(Store::open(opts.storage, &probe, &mut fallbacks));
        sweep_kinds(&[store.kind()], &opts.namespace);
        let rec_key = record_key(&opts.namespace, &opts.scope);
        // The record used when storage holds none that is readable and unexpired.
        let first = Record::new(new_key(), opts.scope.as_str(), now_ms(), opts.ttl_ms());
        let inner = Rc::new(Inner {
            opts,
            store,
            events: Emitter(on_event),
            rec: RefCell::new(first),
            rec_key,
            inflight: RefCell::new(None),
            flights: Cell::new(0),
            listener: RefCell::new(None),
        });
        let stored = inner.read_stored().filter(|r| !r.is_expired(now_ms()));
        let written = stored.is_none();
        if let Some(r) = stored {
            inner.rec.replace(r);
        }
        let rec = inner.rec.borrow().clone();
        inner.report(&rec.key, fallbacks);
        // A record read as is is not written back: that could undo another tab's newer write.
        if written {
            inner.write(&rec);
        }
        inner.listen();
        inner
    }

    /// A new record (new key, state fresh) for this scope.
    pub(crate) fn fresh(&self) -> Record {
        Record::new(
            new_key(),
            self.opts.scope.as_str(),
            now_ms(),
            self.opts.ttl_ms(),
        )
    }

    /// The stored record; an unreadable one is moved to a quarantine key with a
    /// `storage-corrupt` event, and `None` is returned for it as for no record.
    pub(crate) fn read_stored(&self) -> Option<Record> {
        let text = self.store.get(&self.rec_key)?;
        match self.decode(&text) {
            Ok(r) if r.scope == self.opts.scope => Some(r),
            res => {
                let reason = match res {
                    Err(e) => e.to_string(),
                    Ok(_) => "record belongs to another scope".into(),
                };
                let q = quarantine_key(&self.opts.namespace, &self.opts.scope, now_ms());
                let fb = self.store.set(&q, &text);
                self.store.remove(&self.rec_key);
                // The key the checkout will use next: the in-memory one.
                let key = self.rec.borrow().key.clone();
                self.report(&key, fb);
                self.events.emit(
                    &key,
                    Event::StorageCorrupt {
                        reason: &reason,
                        quarantine_key: &q,
                    },
                );
                None
            }
        }
    }

    /// A stored record's text as this page reads it: decoded, its expiry capped by this
    /// page's `ttlSeconds`.
    fn decode(&self, text: &str) -> crate::error::Result<Record> {
        let mut r = Record::decode(text)?;
        r.limit_ttl(self.opts.ttl_ms());
        Ok(r)
    }

    /// Re-reads storage (another tab may have moved on) and adopts what it holds.
    pub(crate) fn reload(&self) -> Record {
        if let Some(r) = self.read_stored() {
            self.rec.replace(r);
        }
        self.rec.borrow().clone()
    }

    /// Makes `rec` this checkout's record and writes it.
    pub(crate) fn replace(&self, rec: &Record) {
        self.rec.replace(rec.clone());
        self.write(rec);
    }

    /// Writes `rec` unless the attempt was abandoned meanwhile (reset, finish, or another
    /// tab moved the scope to another key); returns whether it was written.
    pub(crate) fn persist(&self, rec: &Record) -> bool {
        if self.rec.borrow().key != rec.key {
            return false;
        }
        self.replace(rec);
        true
    }

    fn write(&self, rec: &Record) {
        let fb = self.store.set(&self.rec_key, &rec.encode());
        self.report(&rec.key, fb);
    }

    fn report(&self, key: &str, fallbacks: Vec<Fallback>) {
        for f in fallbacks {
            self.events.emit(
                key,
                Event::StorageFallback {
                    from: f.from,
                    to: f.to,
                    reason: &f.reason,
                },
            );
        }
    }

    /// Emits a `state` event when `previous` differs from `rec.state`.
    pub(crate) fn state_changed(&self, rec: &Record, previous: State) {
        if previous != rec.state {
            self.events.emit(
                &rec.key,
                Event::State {
                    state: rec.state.as_str(),
                    previous: previous.as_str(),
                },
            );
        }
    }

    /// Starts a new attempt on purpose: new key, state fresh, written.
    pub(crate) fn reset(&self) {
        self.start_over(true);
    }

    /// Forgets the record; the next key is kept in memory only until a submit writes it.
    pub(crate) fn finish(&self) {
        self.start_over(false);
    }

    /// A new key, state fresh, no submit in flight; the record written (`keep`) or removed.
    fn start_over(&self, keep: bool) {
        let prev = self.rec.borrow().state;
        let rec = self.fresh();
        self.inflight.take();
        self.rec.replace(rec.clone());
        if keep {
            self.write(&rec);
        } else {
            self.store.remove(&self.rec_key);
        }
        self.state_changed(&rec, prev);
    }

    fn listen(self: &Rc<Inner>) {
        if self.store.kind() == StorageKind::Memory {
            return;
        }
        let Some(w) = web_sys::window() else { return };
        let weak: Weak<Inner> = Rc::downgrade(self);
        let cb = Closure::<dyn FnMut(StorageEvent)>::new(move |ev: StorageEvent| {
            if let Some(inner) = weak.upgrade() {
                inner.on_storage(&ev);
            }
        });
        let _ = w.add_event_listener_with_callback("storage", cb.as_ref().unchecked_ref());
        self.listener.replace(Some(cb));
    }

    fn on_storage(&self, ev: &StorageEvent) {
        if ev.key().as_deref() != Some(self.rec_key.as_str())
            || !self.store.is_area(ev.storage_area())
        {
            return;
        }
        let prev = self.rec.borrow().state;
        let rec = match ev.new_value() {
            Some(text) => match self.decode(&text) {
                Ok(r) => r,
                Err(_) => return,
            },
            // Finished in another tab: the next attempt gets a new key.
            None => self.fresh(),
        };
        self.rec.replace(rec.clone());
        self.state_changed(&rec, prev);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let (Some(cb), Some(w)) = (self.listener.take(), web_sys::window()) {
            let _ = w.remove_event_listener_with_callback("storage", cb.as_ref().unchecked_ref());
        }
    }
}
