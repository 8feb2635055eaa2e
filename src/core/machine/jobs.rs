//! The work a scope does with its lock, one job at a time in the order asked: a `reset()`
//! or `finish()`, a submit sequence (submit.rs).

use super::host::Host;
use super::state::{At, Job, Scope, Stage, Step};
use crate::core::ended::Mark;
use crate::core::record::Record;
use crate::core::sync::{may_replace, Current};
use crate::error::Error;

impl<H: Host> Scope<H> {
    /// Queues `job`; it starts at once when no other job is under way.
    pub(super) fn queue(&mut self, job: Job) {
        self.jobs.push(job);
        if self.jobs.len() == 1 {
            self.resume(Step::Start);
        }
    }

    /// Moves the job under way on with `step`; once it ends, starts the next.
    pub(super) fn resume(&mut self, mut step: Step) {
        while !self.jobs.is_empty() {
            let job = self.jobs.remove(0);
            let left = match job {
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
                self.jobs.insert(0, job);
                return;
            }
            step = Step::Start;
        }
    }

    fn run_start_over(
        &mut self,
        seen: &Mark,
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
        // Removed whatever the store still holds: the attempt given up, or nothing live (an
        // attempt a page ended, which no reader takes any more, is cleared away too).
        let key = stored.map_or_else(|| seen.key.clone(), |old| old.key);
        if self.idb {
            self.idb_put(None);
            return Some(Stage::Remove { key });
        }
        self.removed(&key, None);
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

impl<H: Host> Scope<H> {
    /// The deadline of submit sequence `no` has come: if it still waits for the scope's
    /// lock (another tab holds it: a long request, or a tab the browser froze), it ends with
    /// `outcome-unknown`, reason `another-tab`, having sent nothing, and the page can tell
    /// the customer. Its job stays in the queue, done: it lets the lock go as soon as the
    /// lock comes, and the jobs asked after it wait for the lock as they would have.
    pub(super) fn waited_out(&mut self, no: u32) {
        let hit = self.jobs.iter_mut().find_map(|j| match j {
            Job::Submit(s) if s.no == no && s.before_first_try() => Some(s),
            _ => None,
        });
        let Some(s) = hit else { return };
        s.at = At::WaitedOut;
        let e = Error::OutcomeUnknown {
            attempts: self.rec.attempts,
            reason: "another-tab".into(),
            abandoned: false,
        };
        self.settle(no, Err(e));
    }
}
