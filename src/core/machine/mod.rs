//! The client's protocol as a pure state machine, one per scope per page (quinn-proto's
//! and str0m's shape): the page's calls (`open`, `submit`, `reset`, `finish`) and what the
//! browser answers go in as method calls and [`Input`]s; what to do comes out of
//! [`Scope::poll`] as [`Command`]s (take or release the lock, read or write IndexedDB, send
//! a try, wake me later, emit an event, settle a promise, post a notice). It keeps no
//! futures and no callbacks, and does no I/O but through its [`Host`] (clock, randomness
//! and the synchronous Web Storage): the same machine runs in the browser, behind a thin
//! driver, and in the simulator.
//!
//! The rule behind the cross-tab part: only the tab holding the scope's lock changes the
//! stored key or state, and a key a tab made up at `open()` never replaces a record it may
//! not have seen (core::sync holds the decisions). The whole machine is the scope's one
//! owner in the page: every `Checkout` of the scope is a view of it.

mod cached;
mod host;
mod io;
mod jobs;
mod listen;
mod lock;
pub mod mirror;
mod mutation;
mod record_io;
mod submit;
mod view;

pub use host::{new_key, random01, Host};
pub use io::{Answer, Command, Event, EventKind, Input, NoAnswer, Reply, Request, Wake};
#[cfg(feature = "sim-mutations")]
pub use mutation::{set_mutation, Mutation};
pub use view::sweep_backend;

use alloc::collections::VecDeque;
use alloc::rc::Rc;

use crate::core::options::{Options, StorageKind};
use crate::core::record::{record_key, Record};
use crate::core::sync::{may_be_sending, Notice};
use crate::error::Error;
use crate::prelude::*;
use jobs::Job;
use lock::Lock;
use mirror::Store;
use submit::SubmitJob;

/// What `submit()` meets: the sequence whose promise it returns, or its refusal.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// A sequence of the same payload is in flight: its number (the same promise).
    Joined(u32),
    /// A new sequence, numbered so; [`Command::Settle`] settles it.
    Started(u32),
    /// Refused at once (another payload is in flight).
    Refused(Error),
}

/// The submit sequence `submit()` joins while it runs.
struct Flight {
    /// Its number.
    no: u32,
    /// The fingerprint of its payload.
    fp: String,
}

/// One scope's state in one page, and the work under way for it.
pub struct Scope<H: Host> {
    host: H,
    /// The options of the scope's first `Checkout`: its scope, namespace, storage and
    /// `ttlSeconds` are the record's (each `Checkout` sends with its own).
    opts: Options,
    /// The record's storage key.
    rec_key: String,
    /// The Web Storage (or memory) store: the mirror `open()` and the getters read, and
    /// the record's store itself where IndexedDB is not used.
    store: Store,
    /// Whether IndexedDB holds the record (`storage: "local"` until it fails).
    idb: bool,
    /// Whether the record was shared with the other tabs at `open()`: the scope hears and
    /// posts notices from then on.
    listening: bool,
    /// The record as this page shows it.
    rec: Record,
    /// Whether `rec` came from or went to the scope's store; if not, it is a key this page
    /// made up, which must never replace a record it may not have seen.
    rec_stored: bool,
    /// `reset()` and `finish()` calls waiting for their turn with the lock: until they are
    /// done, what other tabs store does not replace the new key this page shows.
    intents: u32,
    /// The submit sequence `submit()` joins, if one runs.
    flight: Option<Flight>,
    /// The number of the last sequence.
    flights: u32,
    /// Work that needs the lock, in the order asked; the first is under way.
    jobs: VecDeque<Job>,
    /// The cross-tab lock.
    lock: Lock,
    /// The number of the held lease's renewal wakes; counted up at each release, so an
    /// older lease's wakes renew nothing.
    renewals: u32,
    /// Commands not yet polled.
    out: VecDeque<Command>,
}

impl<H: Host> Scope<H> {
    /// Opens the scope for `opts` in a page: picks the storage (with fallbacks, each a
    /// `storage-fallback` event), sweeps the namespace once where the driver says so
    /// (`sweep`), shows the record found, or else the key another page proposed and has not
    /// settled, or a new key, which it keeps ([`Scope::keep_shown`]).
    pub fn open(mut host: H, opts: &Options, sweep: bool) -> Scope<H> {
        let rec_key = record_key(&opts.namespace, &opts.scope);
        let mut fallbacks = Vec::new();
        let mut probe = opts.namespace.clone();
        probe.push_str(":probe");
        let store = Store::open(&mut host, opts.storage, &probe, &mut fallbacks);
        let first = view::fresh(&mut host, opts);
        let mut s = Scope {
            host,
            opts: opts.clone(),
            rec_key,
            store,
            idb: false,
            listening: false,
            rec: first,
            rec_stored: false,
            intents: 0,
            flight: None,
            flights: 0,
            jobs: VecDeque::new(),
            lock: Lock::Free,
            renewals: 0,
            out: VecDeque::new(),
        };
        s.idb = s.shared_with_tabs();
        s.listening = s.idb;
        if sweep {
            s.sweep();
        }
        if let Some(r) = s.read_mirror() {
            let now = s.host.now_ms();
            if !r.is_expired(now) {
                s.rec = r;
                s.rec_stored = true;
            }
        }
        let key = s.rec.key.clone();
        s.report(&key, fallbacks);
        if s.idb {
            s.out.push_back(Command::Listen {
                name: s.rec_key.clone(),
                area: s.store.kind(),
            });
        }
        if !s.rec_stored {
            if s.idb {
                if let Some(r) = s.proposed() {
                    s.rec = r;
                }
            }
            s.keep_shown();
        }
        s
    }

    /// The scope opened again by another `Checkout` of the page: a record that expired
    /// meanwhile gives way to a new key, as a new page would show (a key older than
    /// `ttlSeconds` is never reused), with a `key-changed` event; not while a submit,
    /// `reset()` or `finish()` of the page is under way (it decides).
    pub fn reopen(&mut self) {
        let now = self.host.now_ms();
        if self.rec.is_expired(now) && self.flight.is_none() && self.intents == 0 {
            let next = self.fresh();
            self.show(&next, false);
            self.keep_shown();
        }
    }

    /// The record as the page shows it.
    pub fn record(&self) -> &Record {
        &self.rec
    }

    /// The record's storage key.
    pub fn rec_key(&self) -> &str {
        &self.rec_key
    }

    /// The options the scope was first opened with.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Where this page's copy of the record is, after any fallback.
    pub fn storage(&self) -> StorageKind {
        self.store.kind()
    }

    /// Whether work is under way or queued (the driver keeps the machine while it is).
    pub fn busy(&self) -> bool {
        !self.jobs.is_empty() || !matches!(self.lock, Lock::Free)
    }

    /// `submit()` of the payload `body` (JSON) with fingerprint `fp`, sent with `send`'s
    /// endpoint, headers and retry options: joins the sequence in flight for the same
    /// payload, is refused while another payload's runs, or starts a sequence.
    pub fn submit(&mut self, body: String, fp: String, send: Rc<Options>) -> Submitted {
        if let Some(f) = &self.flight {
            return if f.fp == fp {
                Submitted::Joined(f.no)
            } else {
                Submitted::Refused(Error::PayloadConflict { state: "pending" })
            };
        }
        self.flights += 1;
        let no = self.flights;
        self.flight = Some(Flight { no, fp: fp.clone() });
        let started = self.host.now_ms();
        self.queue(Job::Submit(SubmitJob::new(no, fp, body, send, started)));
        Submitted::Started(no)
    }

    /// `reset()`: a new attempt on purpose, its record stored with the lock.
    pub fn reset(&mut self) {
        self.start_over(true);
    }

    /// `finish()`: the record forgotten with the lock; the next key is kept in memory
    /// until a submit stores it.
    pub fn finish(&mut self) {
        self.start_over(false);
    }

    /// Shows a new key (state fresh) at once and stops this page's submit before its next
    /// try; asks the other tabs to stop sending the old key (unless no tab can be); then,
    /// with the lock (after any sequence in flight), stores the new record (`keep`) or
    /// removes the old one.
    fn start_over(&mut self, keep: bool) {
        let seen = self.rec.key.clone();
        let sending = may_be_sending(&self.rec, self.rec_stored);
        let next = self.fresh();
        self.set_shown(&next, false, false);
        self.intents += 1;
        self.abandon(None);
        if sending {
            self.post(Notice::Abandon(&seen));
        }
        self.queue(Job::StartOver {
            seen,
            next,
            keep,
            stage: None,
        });
    }

    /// Gives up the sequence in flight: any (`None`: this page's `reset()` or `finish()`),
    /// or only one sending with `key` (another tab's). It stops before its next try; the
    /// next `submit()` starts a new sequence.
    fn abandon(&mut self, key: Option<&str>) {
        let Some(no) = self.flight.as_ref().map(|f| f.no) else {
            return;
        };
        let hit = self.jobs.iter_mut().find_map(|j| match j {
            Job::Submit(s) if s.no == no && key.map_or(true, |k| s.sends(k)) => Some(s),
            _ => None,
        });
        if let Some(s) = hit {
            s.abandoned = true;
            self.flight = None;
        }
    }

    /// The next command to run, if any.
    pub fn poll(&mut self) -> Option<Command> {
        self.out.pop_front()
    }

    /// Takes what the browser answered.
    pub fn handle(&mut self, input: Input) {
        match input {
            Input::Notice(text) => self.on_notice(&text),
            Input::StorageEvent { new, old } => self.on_storage(new, old),
            Input::IdbReopened(reason) => self.idb_reopened(reason),
            Input::LockGranted => self.lock_granted(),
            Input::LockRefused => self.lease_start(),
            Input::Woken(Wake::LeasePoll) => self.lease_poll(),
            Input::Woken(Wake::LeaseRenew(n)) => self.lease_renew(n),
            other => self.resume(jobs::Step::from(other)),
        }
    }

    /// Emits `kind` about `key`.
    fn emit(&mut self, key: &str, kind: EventKind) {
        self.out.push_back(Command::Emit(Event {
            key: key.into(),
            kind,
        }));
    }

    /// Settles sequence `no`, which ends it for `submit()`.
    fn settle(&mut self, no: u32, outcome: Result<Reply, Error>) {
        if self.flight.as_ref().is_some_and(|f| f.no == no) {
            self.flight = None;
        }
        self.out.push_back(Command::Settle {
            flight: no,
            outcome,
        });
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
