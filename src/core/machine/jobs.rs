//! The work a scope does with its lock, one job at a time in the order asked: settling the
//! key proposed at `open()`, a `reset()` or `finish()`, a submit sequence (submit.rs). And
//! the two things every job does with the lock: read the record as the last holder left it,
//! and store one for every tab (IndexedDB first, then the Web Storage mirror).

use super::io::{Answer, Input, NoAnswer, Wake};
use super::mirror::Store;
use super::submit::SubmitJob;
use super::{EventKind, Scope};
use super::host::Host;
use crate::core::record::Record;
use crate::core::sync::{may_replace, on_lock, Current, Notice};
use crate::prelude::*;
use super::io::Command;

/// What moves a job on.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step {
    /// Its turn has come.
    Start,
    /// The lock is held.
    Locked,
    /// IndexedDB read the record.
    Read(Result<Option<String>, String>),
    /// IndexedDB committed the write (or failed).
    Written(Result<(), String>),
    /// The try ended.
    Sent(Result<Answer, NoAnswer>),
    /// A wake it asked for.
    Woken(Wake),
}

impl From<Input> for Step {
    fn from(input: Input) -> Step {
        match input {
            Input::IdbRead(r) => Step::Read(r),
            Input::IdbWritten(r) => Step::Written(r),
            Input::Answer(a) => Step::Sent(Ok(a)),
            Input::NoAnswer(n) => Step::Sent(Err(n)),
            Input::Woken(w) => Step::Woken(w),
            // The others are routed before (Scope::handle).
            _ => Step::Start,
        }
    }
}

/// Where a job that reads and writes the record stands.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Stage {
    /// Waiting for its turn.
    Turn,
    /// Waiting for the lock.
    Lock,
    /// Waiting for IndexedDB's read.
    Read,
    /// Waiting for IndexedDB to commit `rec`, encoded as `text`.
    Write {
        /// The record stored.
        rec: Record,
        /// Its text.
        text: String,
    },
    /// Waiting for IndexedDB to delete the record of `key`.
    Remove {
        /// The key of the record removed.
        key: String,
    },
}

/// One piece of work that needs the scope's lock.
pub(super) enum Job {
    /// Settles the key proposed at `open()`: stored if the store holds no record, else the
    /// stored one shown. Skipped when a submit, `reset()` or `finish()` of the page asked
    /// for the lock meanwhile: it reads the record itself and stores what it needs.
    Settle(Option<Stage>),
    /// `reset()` (`keep`: store `next`) or `finish()` (remove the record) made while the
    /// page showed `seen`.
    StartOver {
        /// The key shown when it was called.
        seen: String,
        /// The new attempt's record.
        next: Record,
        /// `reset()`: store `next`; `finish()`: remove the record.
        keep: bool,
        /// Where it stands, once started.
        stage: Option<Stage>,
    },
    /// A submit sequence.
    Submit(SubmitJob),
}

impl<H: Host> Scope<H> {
    /// Queues `job`; it starts at once when no other job is under way.
    pub(super) fn queue(&mut self, job: Job) {
        self.jobs.push_back(job);
        if self.jobs.len() == 1 {
            self.resume(Step::Start);
        }
    }

    /// Moves the job under way on with `step`; once it ends, starts the next.
    pub(super) fn resume(&mut self, mut step: Step) {
        while let Some(job) = self.jobs.pop_front() {
            let left = match job {
                Job::Settle(stage) => self.run_settle(stage, step).map(|s| Job::Settle(Some(s))),
                Job::StartOver {
                    seen,
                    next,
                    keep,
                    stage,
                } => self.run_start_over(&seen, &next, keep, stage, step).map(|s| {
                    Job::StartOver {
                        seen,
                        next,
                        keep,
                        stage: Some(s),
                    }
                }),
                Job::Submit(j) => self.run_submit(j, step).map(Job::Submit),
            };
            if let Some(job) = left {
                self.jobs.push_front(job);
                return;
            }
            step = Step::Start;
        }
    }

    /// Whether a submit, `reset()` or `finish()` of this page asked for the lock.
    fn waiting(&self) -> bool {
        self.flight.is_some() || self.intents > 0
    }

    fn run_settle(&mut self, stage: Option<Stage>, step: Step) -> Option<Stage> {
        match (stage, step) {
            (None, Step::Start) => {
                self.out.push_back(Command::Wake {
                    ms: 0.0,
                    wake: Wake::SettleTurn,
                });
                Some(Stage::Turn)
            }
            (Some(Stage::Turn), Step::Woken(Wake::SettleTurn)) => {
                if self.waiting() {
                    return None;
                }
                self.take_lock();
                Some(Stage::Lock)
            }
            (Some(Stage::Lock), Step::Locked) => {
                if self.waiting() {
                    self.release_lock();
                    return None;
                }
                self.read_then(|s, cur| s.settle_read(cur))
            }
            (Some(Stage::Read), Step::Read(got)) => {
                let cur = self.current_of(Some(got));
                self.settle_read(cur)
            }
            (Some(Stage::Write { rec, text }), Step::Written(done)) => {
                self.stored(&rec, text, Some(done));
                self.release_lock();
                None
            }
            (stage, _) => stage,
        }
    }

    /// The settle job once it knows the record: stores the proposal if nothing is stored.
    fn settle_read(&mut self, cur: Current) -> Option<Stage> {
        let (mut rec, unstored) = self.take(cur);
        if !unstored {
            self.release_lock();
            return None;
        }
        match self.store(&mut rec) {
            Ok(stage) => Some(stage),
            Err(text) => {
                self.stored(&rec, text, None);
                self.release_lock();
                None
            }
        }
    }

    fn run_start_over(
        &mut self,
        seen: &str,
        next: &Record,
        keep: bool,
        stage: Option<Stage>,
        step: Step,
    ) -> Option<Stage> {
        let cur = match (stage, step) {
            (None, Step::Start) => {
                self.take_lock();
                return Some(Stage::Lock);
            }
            (Some(Stage::Lock), Step::Locked) => {
                if self.read_begin() {
                    return Some(Stage::Read);
                }
                self.current_of(None)
            }
            (Some(Stage::Read), Step::Read(got)) => self.current_of(Some(got)),
            (Some(Stage::Write { rec, text }), Step::Written(done)) => {
                self.stored(&rec, text, Some(done));
                return self.started_over(rec, true);
            }
            (Some(Stage::Remove { key }), Step::Written(done)) => {
                self.removed(&key, Some(done));
                return self.started_over(next.clone(), false);
            }
            (stage, _) => return stage,
        };
        let stored = match cur {
            Current::Stored(r) | Current::Legacy(r) => Some(r),
            Current::Mine | Current::Fresh => None,
        };
        let now = self.host.now_ms();
        if !may_replace(stored.as_ref(), seen, now) {
            // Another tab's newer attempt stays, and is shown.
            let shown = stored.unwrap_or_else(|| next.clone());
            return self.started_over(shown, true);
        }
        if keep {
            let mut rec = next.clone();
            return match self.store(&mut rec) {
                Ok(stage) => Some(stage),
                Err(text) => {
                    self.stored(&rec, text, None);
                    self.started_over(rec, true)
                }
            };
        }
        if let Some(old) = stored {
            if self.idb {
                self.idb_put(None);
                return Some(Stage::Remove { key: old.key });
            }
            self.removed(&old.key, None);
        }
        self.started_over(next.clone(), false)
    }

    /// A `reset()` or `finish()` is done: the lock released, the intent counted off, and
    /// what the page shows afterwards shown.
    fn started_over(&mut self, shown: Record, stored: bool) -> Option<Stage> {
        self.release_lock();
        self.intents -= 1;
        self.show(&shown, stored);
        None
    }

    /// Reads the record with the lock: asks IndexedDB (whether it answers, `true`) when it
    /// holds the record.
    pub(super) fn read_begin(&mut self) -> bool {
        if self.idb {
            self.out.push_back(Command::IdbGet {
                key: self.rec_key.clone(),
            });
        }
        self.idb
    }

    /// [`Scope::read_begin`], then `then` with what the page goes on from once known
    /// (at once without IndexedDB); the stage to wait in otherwise.
    fn read_then(
        &mut self,
        then: impl FnOnce(&mut Self, Current) -> Option<Stage>,
    ) -> Option<Stage> {
        if self.read_begin() {
            return Some(Stage::Read);
        }
        let cur = self.current_of(None);
        then(self, cur)
    }

    /// What the lock holder goes on from, once IndexedDB answered `got` (`None`: not
    /// asked): core::sync's [`on_lock`] of IndexedDB's record and the mirror's.
    pub(super) fn current_of(&mut self, got: Option<Result<Option<String>, String>>) -> Current {
        let mut idb_text = None;
        match got {
            Some(Ok(t)) => idb_text = Some(t),
            Some(Err(reason)) => {
                let key = self.rec.key.clone();
                self.idb_failed(&key, reason);
            }
            None => {}
        }
        // Always read: the mirror may hold a write IndexedDB refused.
        let web = self.read_mirror();
        // A key proposed at `open()` (by any page) is settled by this holder, or was made
        // without seeing the record, and must not come back after a reload. Removed before
        // anything is stored, so a page that goes away in between leaves no proposal of a
        // stored key behind.
        self.drop_proposal();
        let (stored, mirror) = match idb_text {
            Some(t) => (t.and_then(|t| self.decode_or_set_aside(&t)), web),
            None => (web, None),
        };
        let now = self.host.now_ms();
        on_lock(stored, mirror, &self.rec, self.rec_stored, now)
    }

    /// What [`Scope::current_of`] told, as a record shown in this page; and whether it
    /// still has to be stored (a key made here, a new attempt, a record only the mirror
    /// held).
    pub(super) fn take(&mut self, cur: Current) -> (Record, bool) {
        let unstored = cur.unstored();
        let rec = match cur {
            Current::Stored(r) | Current::Legacy(r) => r,
            Current::Mine => self.rec.clone(),
            Current::Fresh => self.fresh(),
        };
        self.show(&rec, !unstored);
        (rec, unstored)
    }

    /// Starts storing `rec` (its `rev` counted up) for every tab: `Ok` with the stage to
    /// wait in for IndexedDB, or `Err` with its text when only the mirror holds it (then
    /// [`Scope::stored`] follows at once).
    pub(super) fn store(&mut self, rec: &mut Record) -> Result<Stage, String> {
        rec.rev += 1;
        let text = rec.encode();
        if self.idb {
            self.idb_put(Some(text.clone()));
            return Ok(Stage::Write {
                rec: rec.clone(),
                text,
            });
        }
        Err(text)
    }

    /// A store of `rec` (as `text`) done once IndexedDB answered `done` (`None`: not
    /// used): the mirror follows, the other tabs are told and the page shows it.
    pub(super) fn stored(&mut self, rec: &Record, text: String, done: Option<Result<(), String>>) {
        self.stored_unposted(rec, &text, done);
        self.post(Notice::Stored(&text));
    }

    /// [`Scope::stored`] but the notice to the other tabs.
    pub(super) fn stored_unposted(
        &mut self,
        rec: &Record,
        text: &str,
        done: Option<Result<(), String>>,
    ) {
        if let Some(Err(reason)) = done {
            // Named after the key shown, which a new attempt's record is not yet.
            let shown = self.rec.key.clone();
            self.idb_failed(&shown, reason);
        }
        self.mirror(rec, text);
    }

    /// The record of `key` removed for every tab once IndexedDB answered `done`.
    fn removed(&mut self, key: &str, done: Option<Result<(), String>>) {
        if let Some(Err(reason)) = done {
            let shown = self.rec.key.clone();
            self.idb_failed(&shown, reason);
        }
        Store::remove(&mut self.host, &self.rec_key.clone());
        self.post(Notice::Removed(key));
    }

    /// Asks IndexedDB to write `text` (`None` deletes) under the record's key.
    pub(super) fn idb_put(&mut self, text: Option<String>) {
        self.out.push_back(Command::IdbPut {
            key: self.rec_key.clone(),
            text,
        });
    }

    /// Writes `text`, the encoded `rec`, to the Web Storage mirror and shows it here. Text
    /// in the way that cannot be read (edited by hand, another version) is set aside with
    /// its event first, not overwritten unseen. Where IndexedDB does not hold the record,
    /// the copy is written with `rev` 0 (see core::sync's `store_missed`).
    pub(super) fn mirror(&mut self, rec: &Record, text: &str) {
        let kind = self.store.kind();
        self.read_in(kind);
        let zero;
        let web = if self.idb {
            text
        } else {
            let mut r = rec.clone();
            r.rev = 0;
            zero = r.encode();
            &zero
        };
        let at = self.rec_key.clone();
        let fb = self.store.set(&mut self.host, &at, web);
        let key = self.rec.key.clone();
        self.report(&key, fb);
        self.show(rec, true);
    }

    /// IndexedDB failed: the Web Storage store holds the record from now on. The event
    /// names `key`, the key of the record in hand.
    pub(super) fn idb_failed(&mut self, key: &str, reason: String) {
        self.idb = false;
        let to = self.store.kind().as_str();
        self.emit(
            key,
            EventKind::StorageFallback {
                from: "indexeddb",
                to,
                reason,
            },
        );
    }

    /// IndexedDB's connection was lost and opened again for a request that went through.
    pub(super) fn idb_reopened(&mut self, reason: String) {
        let key = self.rec.key.clone();
        self.emit(&key, EventKind::StorageReopened { reason });
    }
}
