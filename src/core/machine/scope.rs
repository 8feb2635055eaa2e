//! What a page does with a scope: open it, submit, `reset()`, `finish()`, read what it
//! shows; and how the machine takes the browser's answers ([`Scope::handle`]) and gives its
//! commands ([`Scope::poll`]).

use alloc::rc::Rc;

use super::host::Host;
use super::io::{Command, Event, EventKind, Input, Reply, Wake};
use super::mirror::{Fallback, Store};
use super::state::{Flight, Job, Lock, Scope, Step, SubmitJob, Submitted};
use super::view;
use crate::core::ended::Mark;
use crate::core::options::{Options, StorageKind};
use crate::core::record::{record_key, Record};
use crate::core::sync::Notice;
use crate::error::Error;
use crate::prelude::*;

/// The `storage-fallback` reason where the page has no Web Locks (an insecure `http://`
/// origin, a browser from before 2022).
const NO_WEB_LOCKS: &str =
    "no Web Locks (navigator.locks): the record is this tab's alone, tabs are not coordinated";

impl<H: Host> Scope<H> {
    /// Opens the scope for `opts` in a page: picks the storage (with fallbacks, each a
    /// `storage-fallback` event), sweeps the namespace once where the driver says so
    /// (`sweep`), shows the record found, or else a new key, kept in the page: nothing was
    /// sent under it, so it is first stored by the submit that sends it. Whether the
    /// storage takes writes is learnt from a test write where `open()` found the record,
    /// else from the first submit's write. Without Web Locks, `storage: "local"` acts as
    /// `"session"` (the tabs cannot take turns), with a `storage-fallback` event. The
    /// sweep comes last, in the backend the store ended in.
    pub fn open(mut host: H, opts: Rc<Options>, sweep: bool) -> Scope<H> {
        let rec_key = record_key(&opts.namespace, &opts.scope);
        let mut fallbacks = Vec::new();
        let shared = opts.storage == StorageKind::Local && host.web_locks();
        let wanted = if opts.storage == StorageKind::Local && !shared {
            // No Web Locks: the record is this tab's alone, as with `storage: "session"`.
            fallbacks.push(Fallback {
                from: StorageKind::Local,
                to: StorageKind::Session,
                reason: NO_WEB_LOCKS.into(),
            });
            StorageKind::Session
        } else {
            opts.storage
        };
        let store = Store::open(&mut host, wanted, &rec_key, &mut fallbacks);
        let first = view::fresh(&mut host, &opts);
        let mut s = Scope {
            host,
            opts,
            rec_key,
            store,
            idb: shared,
            listening: shared,
            rec: first,
            rec_stored: false,
            intents: 0,
            flight: None,
            flights: 0,
            jobs: Vec::new(),
            lock: Lock::Free,
            out: Vec::new(),
        };
        if let Some(r) = s.read_mirror() {
            let now = s.host.now_ms();
            if !r.is_expired(now) {
                s.rec = r;
                s.rec_stored = true;
            }
        }
        if s.rec_stored {
            let mut probe = s.opts.namespace.clone();
            probe.push_str(":probe");
            s.store.probe(&mut s.host, &probe, &mut fallbacks);
        }
        let key = s.rec.key.clone();
        s.report(&key, fallbacks);
        if !s.rec_stored && super::mutation::on(super::mutation::Mutation::OpenWritesOwnKey) {
            s.store_shown();
        }
        if sweep {
            s.sweep();
        }
        if s.idb {
            s.out.push(Command::Listen {
                name: s.rec_key.clone(),
                area: s.store.kind(),
            });
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
        self.out.push(Command::Wake {
            ms: send.deadline_ms as f64,
            wake: Wake::Deadline(no),
        });
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

    /// Ends the attempt shown for every later reader before it returns (its mark in Web
    /// Storage), shows a new key (state fresh) and stops this page's submit before its next
    /// try; posts the mark to the other tabs (a submit sending the old key stops before its
    /// next try, and the mark is written there too, ahead of localStorage's own); then,
    /// with the lock (after any sequence in flight), stores the new record (`keep`) or
    /// removes the old one.
    pub(super) fn start_over(&mut self, keep: bool) {
        let next = self.fresh();
        let seen = Mark {
            key: self.rec.key.clone(),
            since: next.created_at,
            until: self.rec.expires_at,
        };
        // Shown first: a storage-fallback event of the mark's write names the new key.
        self.set_shown(&next, false, false);
        if keep || !super::mutation::on(super::mutation::Mutation::FinishNoMark) {
            self.end(seen.clone());
        }
        self.intents += 1;
        self.abandon(None);
        self.post(Notice::Abandon(&seen.line()));
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
    pub(super) fn abandon(&mut self, key: Option<&str>) {
        let Some(no) = self.flight.as_ref().map(|f| f.no) else {
            return;
        };
        let hit = self.jobs.iter_mut().find_map(|j| match j {
            Job::Submit(s) if s.no == no && key.is_none_or(|k| s.sends(k)) => Some(s),
            _ => None,
        });
        if let Some(s) = hit {
            s.abandoned = true;
            self.flight = None;
        }
    }

    /// The next command to run, if any.
    pub fn poll(&mut self) -> Option<Command> {
        (!self.out.is_empty()).then(|| self.out.remove(0))
    }

    /// Takes what the browser answered.
    pub fn handle(&mut self, input: Input) {
        match input {
            Input::Notice(text) => self.on_notice(&text),
            Input::StorageEvent { new, old } => self.on_storage(new, old),
            Input::IdbReopened(reason) => self.idb_reopened(reason),
            Input::LockGranted => self.lock_granted(true),
            Input::LockRefused(reason) => self.lock_refused(reason),
            Input::Woken(Wake::OwnLock) => self.lock_granted(false),
            Input::Woken(Wake::Deadline(no)) => self.waited_out(no),
            other => self.resume(Step::from(other)),
        }
    }

    /// Emits `kind` about `key`.
    pub(super) fn emit(&mut self, key: &str, kind: EventKind) {
        self.out.push(Command::Emit(Event {
            key: key.into(),
            kind,
        }));
    }

    /// Settles sequence `no`, which ends it for `submit()`.
    pub(super) fn settle(&mut self, no: u32, outcome: Result<Reply, Error>) {
        if self.flight.as_ref().is_some_and(|f| f.no == no) {
            self.flight = None;
        }
        self.out.push(Command::Settle {
            flight: no,
            outcome,
        });
    }
}
