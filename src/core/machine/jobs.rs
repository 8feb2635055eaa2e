//! The submit sequences of a scope, run with its lock one at a time in the order asked
//! (submit.rs), and the end of one whose deadline came while it waited.

use super::host::Host;
use super::state::{At, Scope, Step, SubmitJob};
use crate::error::Error;

impl<H: Host> Scope<H> {
    /// Queues `job`; it starts at once when no other job is under way.
    pub(super) fn queue(&mut self, job: SubmitJob) {
        self.jobs.push(job);
        if self.jobs.len() == 1 {
            self.resume(Step::Start);
        }
    }

    /// Moves the job under way on with `step`; once it ends, starts the next.
    pub(super) fn resume(&mut self, mut step: Step) {
        while !self.jobs.is_empty() {
            let job = self.jobs.remove(0);
            if let Some(job) = self.run_submit(job, step) {
                self.jobs.insert(0, job);
                return;
            }
            step = Step::Start;
        }
    }

    /// The deadline of submit sequence `no` has come: if it still waits for the scope's
    /// lock (another tab holds it: a long request, or a tab the browser froze), it ends with
    /// `outcome-unknown`, reason `another-tab`, having sent nothing, and the page can tell
    /// the customer. Its job stays in the queue, done: it lets the lock go as soon as the
    /// lock comes, and the jobs asked after it wait for the lock as they would have.
    pub(super) fn waited_out(&mut self, no: u32) {
        let Some(s) = self.jobs.iter_mut().find(|s| s.no == no) else {
            return;
        };
        if !s.held_up() {
            // Sending, or waiting to retry: its budget is spent ([`SubmitJob::spent`]), so
            // no wait follows.
            s.due = true;
            return;
        }
        // A try being stored is counted in its record, not sent.
        let attempts = match (&s.at, &s.rec) {
            (At::Storing(_), Some(r)) => r.attempts - 1,
            _ => self.rec.attempts,
        };
        s.at = At::WaitedOut;
        // A retry's write held up so: the deadline, as for a retry woken too late.
        let reason = if s.retries == 0 {
            "another-tab"
        } else {
            "deadline"
        };
        let e = Error::OutcomeUnknown {
            attempts,
            reason: reason.into(),
            abandoned: false,
        };
        self.settle(no, Err(e));
    }
}
