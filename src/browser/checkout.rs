//! One checkout's live state in this tab: options, storage, the record as this tab shows
//! it, the submit in flight, and the listeners (BroadcastChannel notices, the `storage`
//! event) that keep the shown record current when another tab stores the scope's record.

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::Cell;

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use super::broadcast::Channel;
use super::cell::Slot;
use super::clock::now_ms;
use super::events::{Emitter, Event};
use super::flight::SingleFlight;
use super::idb;
use super::js::text;
use super::lock;
use super::page::PageCell;
use super::record;
use super::shared;
use super::storage::{self, Fallback, Store};
use super::task::spawn_local;
use crate::core::options::{Options, StorageKind};
use crate::core::record::{quarantine_key, record_key, sweep_due, Record};
use crate::core::state::State;
use crate::core::sync::{may_be_sending, removes, supersedes, Notice};

pub(crate) use super::key::new_key;

/// The backends this page has swept, each as `{namespace}:{backend}` (`local`, `session`,
/// `memory` or `indexeddb`): once per page load is enough for records that live for hours,
/// a Web Storage sweep reads every key of the backend, the page's own among them, and an
/// IndexedDB one is a scan of the store that delays the submit after it.
static SWEPT: PageCell<Vec<String>> = PageCell::new(Vec::new());

/// Deletes from the given backends what core's `sweep_due` says: the expired records of
/// `namespace` and its quarantined copies past their retention; returns how many (the
/// IndexedDB ones, deleted in the background where `idb` says so, are not counted).
/// With `once`, each backend is skipped if this page has swept it for `namespace` before;
/// without, all are swept, and the IndexedDB sweep counts as this page's.
pub(crate) fn sweep_kinds(kinds: &[StorageKind], namespace: &str, idb: bool, once: bool) -> u32 {
    let mut prefix = String::from(namespace);
    prefix.push(':');
    let now = now_ms();
    let due = |backend: &str| {
        let mut done = prefix.clone();
        done.push_str(backend);
        SWEPT.first_time(done) || !once
    };
    if idb && due("indexeddb") {
        let (ns, p) = (String::from(namespace), prefix.clone());
        spawn_local(async move {
            idb::sweep(&p, move |k, v| sweep_due(&ns, &k, &v, now, record::decode)).await;
        });
    }
    let mut n = 0;
    for &kind in kinds {
        // Without `once` the Web Storage sweep is not recorded: `open()` still sweeps.
        if !once || due(kind.as_str()) {
            n += storage::remove_where(kind, &prefix, |k, v| {
                sweep_due(namespace, k, v, now, record::decode)
            });
        }
    }
    n
}

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// Adds (`add`) or removes the window's `storage` event listener that calls `f` with
    /// the event's `[key, newValue, oldValue, storageArea]`; nothing without a window.
    #[wasm_bindgen(js_name = onStorageEvent)]
    fn on_storage_event(f: &JsValue, add: bool);
}

/// A new record (new key, state fresh) for the scope of `opts`.
fn fresh(opts: &Options) -> Record {
    Record::new(new_key(), opts.scope.as_str(), now_ms(), opts.ttl_ms())
}

/// The `storage` event listener, kept to remove it when the checkout is freed.
type Listener = Closure<dyn FnMut(JsValue)>;

/// Shared by the JS `Checkout` object and its running operations.
pub(crate) struct Inner {
    /// Validated options.
    pub(crate) opts: Options,
    /// The Web Storage (or memory) store: the mirror every getter and `open()` read, and
    /// the store itself where IndexedDB is not used.
    pub(crate) store: Rc<Store>,
    /// `onEvent`.
    pub(crate) events: Emitter,
    /// The record as this tab shows it.
    pub(crate) rec: Slot<Record>,
    /// Whether `rec` came from or went to the scope's store; if not, it is a key this tab
    /// made up, which must never replace a record it may not have seen.
    pub(crate) rec_stored: Cell<bool>,
    /// The record's storage key.
    pub(crate) rec_key: String,
    /// Whether IndexedDB holds the scope's record (`storage: "local"` until it fails).
    pub(crate) idb: Cell<bool>,
    /// `reset()` and `finish()` calls waiting for their turn with the lock: until they are
    /// done, what other tabs store does not replace the new key this tab shows.
    pub(crate) intents: Cell<u32>,
    /// The submit sequence in flight in this tab.
    pub(crate) flight: SingleFlight,
    channel: Slot<Option<Channel>>,
    listener: Slot<Option<Listener>>,
}

impl Inner {
    /// Opens the scope: picks the storage (with fallbacks), sweeps it (expired records,
    /// quarantined copies past their retention; once per page, namespace and backend) and
    /// shows the mirror's record. With no readable record, a scope kept in session or
    /// memory storage (no other tab shares it) stores its new key at once; otherwise the new
    /// key is stored by the lock holder only if the scope's store holds none (in the
    /// background, at once), unless a submit, `reset()` or `finish()` of this tab gets
    /// there first (it reads the record itself and stores what it needs).
    pub(crate) fn open(opts: Options, on_event: Option<Function>) -> Rc<Inner> {
        let mut fallbacks = Vec::new();
        let mut probe = String::from(opts.namespace.as_str());
        probe.push_str(":probe");
        let store = Rc::new(Store::open(opts.storage, &probe, &mut fallbacks));
        // `storage: "local"` shares the record with every tab through IndexedDB, also when
        // localStorage has failed and the mirror is sessionStorage or memory (another tab's
        // pending key stays within reach), as long as the lock spans tabs: the storage
        // lease that stands in for Web Locks lives in the store, one tab's own after a
        // fallback.
        let shared = opts.storage == StorageKind::Local
            && (store.kind() == StorageKind::Local || lock::web_locks());
        // Once per page, namespace and backend; IndexedDB only where the record is shared.
        sweep_kinds(&[store.kind()], &opts.namespace, shared, true);
        let rec_key = record_key(&opts.namespace, &opts.scope);
        let first = fresh(&opts);
        let inner = Rc::new(Inner {
            opts,
            store,
            events: Emitter(on_event),
            rec: Slot::new(first),
            rec_stored: Cell::new(false),
            rec_key,
            idb: Cell::new(shared),
            intents: Cell::new(0),
            flight: SingleFlight::default(),
            channel: Slot::new(None),
            listener: Slot::new(None),
        });
        // Two `if`s, not `Option::filter`, whose by-value closure and drops weigh more.
        if let Some(r) = inner.read_mirror() {
            if !r.is_expired(now_ms()) {
                inner.rec.replace(r);
                inner.rec_stored.set(true);
            }
        }
        let key = inner.rec.borrow().key.clone();
        inner.report(&key, fallbacks);
        inner.listen();
        if !inner.rec_stored.get() {
            if shared {
                let i = inner.clone();
                spawn_local(async move {
                    // A submit, reset() or finish() asked for the lock meanwhile: it reads
                    // the scope's record itself and stores what it needs, and would wait
                    // behind this.
                    let waiting = || i.flight.busy() || i.intents.get() > 0;
                    if waiting() {
                        return;
                    }
                    let held = i.hold().await;
                    if waiting() {
                        return;
                    }
                    // The scope gets a stored record: the one found, or this tab's new key.
                    // Written out here, not an `async fn` nested in this one: fewer bytes.
                    let (mut rec, unstored) = held.read().await;
                    if unstored {
                        held.store(&mut rec).await;
                    }
                });
            } else {
                // Session and memory stores belong to this tab alone, which has just read
                // all they hold: nobody else's record can be missed. The shown record is
                // the one stored (its `rev` counted up): same key and state, no event.
                let text = {
                    let mut rec = inner.rec.borrow_mut();
                    rec.rev += 1;
                    rec.encode()
                };
                inner.rec_stored.set(true);
                let fb = inner.store.set(&inner.rec_key, &text);
                inner.report(&key, fb);
            }
        }
        inner
    }

    /// A new record (new key, state fresh) for this scope.
    pub(crate) fn fresh(&self) -> Record {
        fresh(&self.opts)
    }

    /// The record in Web Storage or memory, best backend first: the store's own, or one
    /// an earlier fallback (a quota hit, a refused write) left it in. An unreadable one is
    /// set aside (and removed) and the search goes on.
    pub(crate) fn read_mirror(&self) -> Option<Record> {
        storage::ALL.iter().find_map(|&k| self.read_in(k))
    }

    /// The record in the backend `kind`; unreadable text there is set aside and removed.
    pub(crate) fn read_in(&self, kind: StorageKind) -> Option<Record> {
        let text = storage::peek(kind, &self.rec_key, false)?;
        let r = self.decode_or_set_aside(&text);
        if r.is_none() {
            storage::peek(kind, &self.rec_key, true);
        }
        r
    }

    /// A stored record's text as this page reads it; an unreadable one is copied to a
    /// quarantine key with a `storage-corrupt` event, and `None` is returned for it as for
    /// no record.
    pub(crate) fn decode_or_set_aside(&self, text: &str) -> Option<Record> {
        let reason = match self.decode(text) {
            Ok(r) if r.scope == self.opts.scope => return Some(r),
            Err(e) => e.message(),
            Ok(_) => "record belongs to another scope".into(),
        };
        let q = quarantine_key(&self.opts.namespace, &self.opts.scope, now_ms());
        let fb = self.store.set(&q, text);
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

    /// Decoded, its expiry capped by this page's `ttlSeconds`.
    pub(crate) fn decode(&self, text: &str) -> crate::error::Result<Record> {
        let mut r = record::decode(text)?;
        r.limit_ttl(self.opts.ttl_ms());
        Ok(r)
    }

    /// Makes `rec` what this tab shows (`stored`: it is the scope's stored record), with a
    /// `state` event when the state changed; skipped while a `reset()` or `finish()` of
    /// this tab waits for its turn (it decides what is shown once done).
    pub(crate) fn show(&self, rec: &Record, stored: bool) {
        if self.intents.get() == 0 {
            self.set_shown(rec, stored);
        }
    }

    fn set_shown(&self, rec: &Record, stored: bool) {
        let prev = self.rec.replace(rec.clone()).state;
        self.rec_stored.set(stored);
        self.state_changed(rec, prev);
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

    /// `storage-fallback` events for the backends that failed.
    pub(crate) fn report(&self, key: &str, fallbacks: Vec<Fallback>) {
        for f in &fallbacks {
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

    /// Posts a notice to the scope's other tabs (where there is a channel).
    pub(crate) fn post(&self, n: Notice) {
        if let Some(c) = &*self.channel.borrow() {
            c.post(&n.encode());
        }
    }

    /// Starts a new attempt on purpose: new key, state fresh, stored once this tab holds
    /// the lock (unless another tab moved the scope to a newer attempt meanwhile).
    pub(crate) fn reset(self: &Rc<Self>) {
        self.start_over(true);
    }

    /// Forgets the record once this tab holds the lock; the next key is kept in memory only
    /// until a submit stores it.
    pub(crate) fn finish(self: &Rc<Self>) {
        self.start_over(false);
    }

    /// Shows a new key (state fresh) at once and stops this tab's submit before its next
    /// try; asks the other tabs to stop sending the old key (unless no tab can be); then,
    /// with the lock (after any sequence in flight), stores the new record (`keep`) or
    /// removes the old one.
    fn start_over(self: &Rc<Self>, keep: bool) {
        let seen = self.rec.borrow().key.clone();
        let sending = may_be_sending(&self.rec.borrow(), self.rec_stored.get());
        let next = self.fresh();
        self.set_shown(&next, false);
        self.intents.set(self.intents.get() + 1);
        self.flight.abandon(None);
        if sending {
            self.post(Notice::Abandon(&seen));
        }
        spawn_local(shared::start_over(self.clone(), seen, next, keep));
    }

    /// Joins the scope's channel and listens for `storage` events (only where the record
    /// is shared: session and memory records belong to this tab or page).
    fn listen(self: &Rc<Inner>) {
        if !self.idb.get() {
            return;
        }
        let weak: Weak<Inner> = Rc::downgrade(self);
        self.channel
            .replace(Channel::open(&self.rec_key, move |text: String| {
                if let Some(inner) = weak.upgrade() {
                    inner.on_notice(&text);
                }
            }));
        let weak: Weak<Inner> = Rc::downgrade(self);
        let cb: Listener = Closure::new(move |ev: JsValue| {
            if let Some(inner) = weak.upgrade() {
                inner.on_storage(ev.unchecked_ref());
            }
        });
        on_storage_event(cb.as_ref(), true);
        self.listener.replace(Some(cb));
    }

    fn on_notice(&self, text: &str) {
        match Notice::parse(text) {
            Some(Notice::Stored(t)) => self.take_copy(t),
            Some(Notice::Removed(k)) => self.take_removal(k),
            Some(Notice::Abandon(k)) => self.flight.abandon(Some(k)),
            None => {}
        }
    }

    /// The `storage` event: the mirror written by another tab (the fallback where
    /// BroadcastChannel is missing; the same news twice is harmless).
    fn on_storage(&self, ev: &Array) {
        if text(&ev.get(0)).as_deref() != Some(self.rec_key.as_str())
            || !self.store.is_area(&ev.get(3))
        {
            return;
        }
        match (text(&ev.get(1)), text(&ev.get(2))) {
            (Some(text), _) => self.take_copy(&text),
            (None, Some(old)) => {
                if let Ok(r) = self.decode(&old) {
                    self.take_removal(&r.key);
                }
            }
            (None, None) => {}
        }
    }

    /// Another tab stored `text`: shown here if it is newer than what this tab shows.
    fn take_copy(&self, text: &str) {
        let Ok(r) = self.decode(text) else { return };
        if r.scope == self.opts.scope && supersedes(&r, &self.rec.borrow(), self.rec_stored.get()) {
            self.show(&r, true);
        }
    }

    /// Another tab removed the record of `key`: this tab's next attempt gets a new key.
    fn take_removal(&self, key: &str) {
        if removes(key, &self.rec.borrow(), self.rec_stored.get()) {
            self.show(&self.fresh(), false);
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(cb) = self.listener.take() {
            on_storage_event(cb.as_ref(), false);
        }
    }
}
