//! What a page does with a scope: open it, submit, `reset()`, `finish()`, read what it
//! shows; and how the machine takes the browser's answers ([`Scope::handle`]) and gives its
//! commands ([`Scope::poll`]).

use alloc::rc::Rc;

use super::host::Host;
use super::io::{Command, Event, EventKind, Input, Reply, Wake};
use super::mirror::{Fallback, Store};
use super::state::{Flight, Lock, Resume, Scope, Step, SubmitJob, Submitted};
use super::view;
use crate::core::ended::Mark;
use crate::core::options::{Options, StorageKind};
use crate::core::record::{record_key, Record};
use crate::core::state::State;
use crate::core::sync::{Notice, Shown};
use crate::error::Error;
use crate::prelude::*;

/// The `storage-fallback` reason where the page has no Web Locks (an insecure `http://`
/// origin, a browser from before 2022).
const NO_WEB_LOCKS: &str = "no Web Locks (navigator.locks): each tab's record is its own";

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
            shown: Shown::Made,
            resume: None,
            stopped: None,
            ends: false,
            replaced: false,
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
                s.shown = Shown::Stored;
            }
        }
        if s.shown == Shown::Stored {
            let mut probe = s.opts.namespace.clone();
            probe.push_str(":probe");
            s.store.probe(&mut s.host, &probe, &mut fallbacks);
        }
        let key = s.rec.key.clone();
        s.report(&key, fallbacks);
        if s.shown == Shown::Made
            && super::mutation::on(super::mutation::Mutation::OpenWritesOwnKey)
        {
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
    /// `ttlSeconds` is never reused), with a `key-changed` event; not while a submit of the
    /// page is under way (it decides).
    pub fn reopen(&mut self) {
        let now = self.host.now_ms();
        if self.rec.is_expired(now) && self.flight.is_none() {
            let next = self.fresh();
            self.show(&next, Shown::Made);
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

    /// Whether the page keeps the machine with no `Checkout` left: while it is
    /// [`Scope::busy`], or while its last submit has no answer (`outcome-unknown`), so
    /// that the page's next submit of that payload, from a `Checkout` opened again, resumes
    /// that attempt as the page's own.
    pub fn kept(&self) -> bool {
        self.busy() || self.resume.as_ref().is_some_and(|r| r.unknown)
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
        // What the page has heard of ended attempts as it is called; a submit of the payload
        // of one that has no answer (it settled without one, or another tab's end stopped
        // it and it has not settled) goes on as that one had heard.
        let mut own = false;
        let mut key = self.rec.key.clone();
        // Where the last is not such a one, the one before it (which another tab's end may
        // have stopped, to settle after the last) is looked at instead, and the last kept
        // as the one before.
        if !matches!(&self.resume, Some(r) if r.unknown && r.fp == fp) {
            core::mem::swap(&mut self.resume, &mut self.stopped);
        }
        let heard = match self.resume.take() {
            Some(r) if r.unknown && r.fp == fp => {
                own = true;
                key = r.key;
                r.heard
            }
            // The marks of the key shown and of the record's copies in Web Storage read by
            // their own entries first: where the scope's flag is gone, a mark found so has
            // the listing made. The key shown may be none of the copies' (another tab's
            // copy, which this page did not take for newer).
            _ => {
                self.replaced = false;
                if !super::mutation::on(super::mutation::Mutation::ShownMarkUnread) {
                    self.marks_of(Some(&key));
                }
                self.read_mirror_any(None);
                self.ended()
            }
        };
        self.resume = Some(Resume {
            no,
            fp: fp.clone(),
            heard: heard.clone(),
            unknown: true,
            key,
        });
        self.out.push(Command::Wake {
            ms: send.deadline_ms as f64,
            wake: Wake::Deadline(no),
        });
        let seen_failed = (self.rec.state == State::Failed).then(|| self.rec.key.clone());
        let mut job = SubmitJob::new(no, fp, body, send, started, heard, seen_failed);
        job.own = own;
        self.queue(job);
        Submitted::Started(no)
    }

    /// `reset()`: a new attempt on purpose. `false` when the end is not durable (see
    /// [`Scope::finish`]).
    pub fn reset(&mut self) -> bool {
        self.start_over(true)
    }

    /// `finish()`: the attempt ended for every later reader; the next key is kept in
    /// memory until a submit stores it. `false` when the end could not be stored where
    /// every later page and tab reads it (Web Storage refused it): it holds in this page
    /// only, with a `storage-fallback` event.
    pub fn finish(&mut self) -> bool {
        self.start_over(false)
    }

    /// Ends the attempt shown for every later reader before it returns (its mark in Web
    /// Storage), shows a new key (state fresh), kept in the page until a submit stores it,
    /// and stops this page's submit before its next try; posts the mark to the other tabs
    /// (a submit sending the old key stops before its next try, and the mark is written
    /// there too, ahead of localStorage's own). Nothing stored is removed: the ended
    /// attempt's record keeps its answer for the submits called before the end. Whether
    /// the mark is where every later page reads it.
    pub(super) fn start_over(&mut self, reset: bool) -> bool {
        let next = self.fresh();
        let seen = Mark {
            key: self.rec.key.clone(),
            bound: self.rec.fingerprint.is_some(),
            until: self.rec.expires_at,
        };
        // Shown first: a storage-fallback event of the mark's write names the new key.
        self.set_shown(&next, Shown::Made, false);
        self.resume = None;
        self.stopped = None;
        let durable = if reset || !super::mutation::on(super::mutation::Mutation::FinishNoMark) {
            self.end(seen.clone())
        } else {
            true
        };
        self.abandon(None);
        self.post(Notice::Abandon(&seen.line()));
        durable
    }

    /// Gives up the sequence in flight: any (`None`: this page's `reset()` or `finish()`),
    /// or only one sending with `key` (another tab's). It stops before its next try; the
    /// next `submit()` starts a new sequence.
    pub(super) fn abandon(&mut self, key: Option<&str>) {
        let Some(no) = self.flight.as_ref().map(|f| f.no) else {
            return;
        };
        let hit = self
            .jobs
            .iter_mut()
            .find(|s| s.no == no && key.is_none_or(|k| s.sends(k)));
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
            Input::StorageEvent(new) => self.on_storage(new),
            Input::IdbReopened(reason) => self.idb_reopened(reason),
            Input::LockGranted => self.lock_granted(true),
            Input::LockRefused(reason) => self.lock_refused(reason),
            Input::Woken(Wake::OwnLock) => self.lock_granted(false),
            Input::Woken(Wake::Deadline(no)) => self.waited_out(no),
            // The job under way's inputs; one it does not expect leaves it where it is.
            Input::Woken(w) => self.resume(Step::Woken(w)),
            Input::IdbRead(r) => self.resume(Step::Read(r)),
            Input::IdbWritten(r) => self.resume(Step::Written(r)),
            Input::Answer(a) => self.resume(Step::Sent(Ok(a))),
            Input::NoAnswer(n) => self.resume(Step::Sent(Err(n))),
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
        let unknown = matches!(outcome, Err(Error::OutcomeUnknown { .. }));
        if let Some(r) = self.resume.as_mut().filter(|r| r.no == no) {
            r.unknown = unknown;
        }
        if let Some(r) = self.stopped.as_mut().filter(|r| r.no == no) {
            r.unknown = unknown;
        }
        self.out.push(Command::Settle {
            flight: no,
            outcome,
        });
    }
}
