//! One scope's live state in this page, shared by every `Checkout` of the scope: options,
//! storage, the record as the page shows it, the submit in flight, the `reset()` or
//! `finish()` waiting for its turn, and what `open()` does (the proposal of a new key).

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::Cell;

use js_sys::Function;

use super::broadcast::Channel;
use super::cell::Slot;
use super::clock::now_ms;
use super::events::{Emitter, Event};
use super::flight::SingleFlight;
use super::listen::Listener;
use super::lock;
use super::record;
use super::scopes;
use super::shared;
use super::storage::{self, Fallback, Store};
use super::sweep::sweep_kinds;
use super::task::spawn_local;
use crate::core::options::{Options, StorageKind};
use crate::core::record::{proposal_key, quarantine_key, record_key, Record};
use crate::core::state::State;
use crate::core::sync::{may_be_sending, Notice};

pub(crate) use super::key::new_key;

/// Whether a scope opened with `opts`, its copy in `store`, shares its record with the
/// other tabs. `storage: "local"` does, through IndexedDB, also when localStorage has
/// failed and the mirror is sessionStorage or memory (another tab's pending key stays
/// within reach), as long as the lock spans tabs: the storage lease that stands in for
/// Web Locks lives in the store, one tab's own after a fallback.
fn shared_with_tabs(opts: &Options, store: &Store) -> bool {
    opts.storage == StorageKind::Local && (store.kind() == StorageKind::Local || lock::web_locks())
}

/// A new record (new key, state fresh) for the scope of `opts`.
fn fresh(opts: &Options) -> Record {
    Record::new(new_key(), opts.scope.as_str(), now_ms(), opts.ttl_ms())
}

/// One scope's live state in this page, shared by every `Checkout` of the scope and their
/// running operations.
pub(crate) struct Inner {
    /// The options of the scope's first `Checkout` in the page: its scope, namespace,
    /// storage and `ttlSeconds` are the record's (each `Checkout` sends with its own).
    pub(crate) opts: Options,
    /// The Web Storage (or memory) store: the mirror every getter and `open()` read, and
    /// the store itself where IndexedDB is not used.
    pub(crate) store: Rc<Store>,
    /// The `onEvent` of every open `Checkout` of the scope.
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
    /// The scope's BroadcastChannel, where the record is shared.
    pub(crate) channel: Slot<Option<Channel>>,
    /// The `storage` event listener, where the record is shared.
    pub(crate) listener: Slot<Option<Listener>>,
}

impl Inner {
    /// Opens the scope for the `Checkout` numbered `id`, whose `onEvent` is `on_event`:
    /// the page's live `Inner` of the scope when there is one ([`scopes`]), so that every
    /// `Checkout` of a scope in the page shows one record. Otherwise a new one: picks the
    /// storage (with fallbacks), sweeps it (expired records, quarantined copies past their
    /// retention; once per page, namespace and backend) and shows the mirror's record.
    /// With no readable record, a shared scope shows the key another page proposed and
    /// has not settled yet, if any, and the key shown is kept ([`Inner::keep_shown`]).
    pub(crate) fn open(opts: &Options, on_event: Option<Function>, id: u32) -> Rc<Inner> {
        let rec_key = record_key(&opts.namespace, &opts.scope);
        if let Some(inner) = scopes::find(&rec_key, opts.storage) {
            inner.listen_for(id, on_event);
            inner.renew_if_expired();
            return inner;
        }
        let opts = opts.clone();
        let mut fallbacks = Vec::new();
        let mut probe = String::from(opts.namespace.as_str());
        probe.push_str(":probe");
        let store = Rc::new(Store::open(opts.storage, &probe, &mut fallbacks));
        let shared = shared_with_tabs(&opts, &store);
        // Once per page, namespace and backend; IndexedDB only where the record is shared.
        sweep_kinds(&[store.kind()], &opts.namespace, shared, true);
        let first = fresh(&opts);
        let inner = Rc::new(Inner {
            opts,
            store,
            events: Emitter::default(),
            rec: Slot::new(first),
            rec_stored: Cell::new(false),
            rec_key,
            idb: Cell::new(shared),
            intents: Cell::new(0),
            flight: SingleFlight::default(),
            channel: Slot::new(None),
            listener: Slot::new(None),
        });
        scopes::add(&inner);
        inner.listen_for(id, on_event);
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
                if let Some(r) = inner.proposed() {
                    inner.rec.replace(r);
                }
            }
            inner.keep_shown(shared);
        }
        inner
    }

    /// A scope opened again after its record expired shows a new key, as a new page would
    /// (a key older than `ttlSeconds` is never reused), with a `key-changed` event; not
    /// while a submit, `reset()` or `finish()` of the page is under way (it decides).
    fn renew_if_expired(self: &Rc<Self>) {
        let expired = self.rec.borrow().is_expired(now_ms());
        if expired && !self.flight.busy() && self.intents.get() == 0 {
            self.show(&self.fresh(), false);
            self.keep_shown(shared_with_tabs(&self.opts, &self.store));
        }
    }

    /// Makes the key shown, which was never stored, the scope's. A record `shared` with
    /// other tabs gets it as a proposal ([`Inner::propose`]), settled with the scope's lock
    /// in the background, at once: stored only if the scope's store holds no record, else
    /// the stored one is shown (`key-changed`); a submit, `reset()` or `finish()` of this
    /// page that asks for the lock first reads the record itself and stores what it needs.
    /// Session and memory stores belong to this tab alone, which has just read all they
    /// hold: nobody else's record can be missed, and the key is stored at once (its `rev`
    /// counted up: same key and state, no event).
    fn keep_shown(self: &Rc<Self>, shared: bool) {
        if !shared {
            let (key, text) = {
                let mut rec = self.rec.borrow_mut();
                rec.rev += 1;
                (rec.key.clone(), rec.encode())
            };
            self.rec_stored.set(true);
            let fb = self.store.set(&self.rec_key, &text);
            self.report(&key, fb);
            return;
        }
        self.propose();
        let i = self.clone();
        spawn_local(async move {
            // A submit, reset() or finish() asked for the lock meanwhile: it reads the
            // scope's record itself and stores what it needs, and would wait behind this.
            let waiting = || i.flight.busy() || i.intents.get() > 0;
            if waiting() {
                return;
            }
            let held = i.hold().await;
            if waiting() {
                return;
            }
            // The scope gets a stored record: the one found, or this page's key. Written
            // out here, not an `async fn` nested in this one: fewer bytes.
            let (mut rec, unstored) = held.read().await;
            if unstored {
                held.store(&mut rec).await;
            }
        });
    }

    /// Lists `on_event` as the `onEvent` of the `Checkout` numbered `id`.
    pub(crate) fn listen_for(&self, id: u32, on_event: Option<Function>) {
        if let Some(f) = on_event {
            self.events.add(id, f);
        }
    }

    /// The live key a page of the origin proposed for the scope at `open()` and has not
    /// settled yet, if any: this tab's before a reload, or another tab's that opened just
    /// before.
    fn proposed(&self) -> Option<Record> {
        let text = self
            .store
            .get(&proposal_key(&self.opts.namespace, &self.opts.scope))?;
        let r = self.decode(&text).ok()?;
        (r.scope == self.opts.scope && !r.is_expired(now_ms())).then_some(r)
    }

    /// Proposes the key this page shows: written at once, where a reload finds it, but
    /// never as the scope's record. Only the lock holder writes that, and removes the
    /// proposal when it reads the record
    /// ([`Locked::current`](super::shared::Locked::current)), so a key made up here never
    /// replaces a record this page has not seen.
    fn propose(&self) {
        let at = proposal_key(&self.opts.namespace, &self.opts.scope);
        let (key, text) = {
            let r = self.rec.borrow();
            (r.key.clone(), r.encode())
        };
        let fb = self.store.set(&at, &text);
        self.report(&key, fb);
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

    /// Makes `rec` what this page shows (`stored`: it is the scope's stored record), with
    /// a `key-changed` event when the key changed and a `state` event when the state did;
    /// skipped while a `reset()` or `finish()` of this page waits for its turn (it decides
    /// what is shown once done).
    pub(crate) fn show(&self, rec: &Record, stored: bool) {
        if self.intents.get() == 0 {
            self.set_shown(rec, stored, true);
        }
    }

    /// [`Inner::show`] at once; with `announce`, a changed key is told (`key-changed`):
    /// not the new key of this page's own `reset()` or `finish()`.
    fn set_shown(&self, rec: &Record, stored: bool, announce: bool) {
        let prev = self.rec.replace(rec.clone());
        self.rec_stored.set(stored);
        if announce && prev.key != rec.key {
            self.events.emit(
                &rec.key,
                Event::KeyChanged {
                    previous: &prev.key,
                },
            );
        }
        self.state_changed(rec, prev.state);
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
        self.set_shown(&next, false, false);
        self.intents.set(self.intents.get() + 1);
        self.flight.abandon(None);
        if sending {
            self.post(Notice::Abandon(&seen));
        }
        spawn_local(shared::start_over(self.clone(), seen, next, keep));
    }
}
