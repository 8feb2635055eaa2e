//! The work a scope does with its lock, one job at a time in the order asked: settling the
//! key proposed at `open()`, a `reset()` or `finish()`, a submit sequence (submit.rs).

use super::host::Host;
use super::io::{Answer, Command, Input, NoAnswer, Wake};
use super::submit::SubmitJob;
use super::Scope;
use crate::core::record::Record;
use crate::core::sync::{may_replace, Current};
use crate::prelude::*;

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
                } => self
                    .run_start_over(&seen, &next, keep, stage, step)
                    .map(|s| Job::StartOver {
                        seen,
                        next,
                        keep,
                        stage: Some(s),
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
}
