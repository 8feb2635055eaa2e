//! A submit sequence: the stored answer, without the lock, when the page shows one for
//! the payload (core::machine's `cached`); else the lock, the record, core's plan, then
//! the tries (each stored before it leaves, core::retry deciding what follows each), and
//! the final answer stored.

use super::cached::cached;
use super::host::{random01, Host};
use super::io::EventKind;
use super::io::{Answer, Command, NoAnswer, Reply, Request, Wake};
use super::state::{At, Scope, Stage, Step, SubmitJob};
use crate::core::header::{format_key, is_replayed};
use crate::core::plan::{plan_submit_since, SubmitPlan};
use crate::core::record::StoredResponse;
use crate::core::retry::{classify, Class, Next, TryOutcome};
use crate::core::retry_after::retry_after_ms;
use crate::core::state::State;
use crate::core::sync::{Current, Notice, Shown};
use crate::error::Error;
use crate::prelude::*;

/// `outcome-unknown` after `attempts` tries.
fn unknown(attempts: u32, reason: String, abandoned: bool) -> Error {
    Error::OutcomeUnknown {
        attempts,
        reason,
        abandoned,
    }
}

impl<H: Host> Scope<H> {
    /// Moves sequence `j` on with `step`; `None` once it ended (its promise settled).
    pub(super) fn run_submit(&mut self, mut j: SubmitJob, step: Step) -> Option<SubmitJob> {
        let at = core::mem::replace(&mut j.at, At::Start);
        let next = match (at, step) {
            (At::Start, Step::Start) => self.submit_start(&j),
            (At::Cached(shown), Step::Read(got)) => self.submit_cached(&j, &shown, got),
            (At::Locking(Stage::Lock), Step::Locked) => {
                if self.read_begin() {
                    Some(At::Locking(Stage::Read))
                } else {
                    let (cur, rev) = self.current_of(None, &j);
                    self.submit_plan(&mut j, cur, rev)
                }
            }
            (At::Locking(Stage::Read), Step::Read(got)) => {
                let (cur, rev) = self.current_of(Some(got), &j);
                self.submit_plan(&mut j, cur, rev)
            }
            (At::Storing(text), Step::Written(done)) => {
                let rec = j.rec.clone().unwrap_or_else(|| self.rec.clone());
                self.stored(&rec, &text, Some(done));
                // Given up, or past its time, while the try's record was being written (a
                // tab frozen then thaws late): it does not go out (the record counts it;
                // the error counts the tries sent).
                if let Some(e) = self.held_back(&j, rec.attempts - 1, "deadline") {
                    self.release_lock();
                    self.settle(j.no, Err(e));
                    return None;
                }
                self.launch(&j, text)
            }
            (At::Sending, Step::Sent(sent)) => self.after_try(&mut j, sent),
            (At::Waiting(reason), Step::Woken(Wake::Retry)) => {
                j.retries += 1;
                self.after_wait(&mut j, reason)
            }
            (At::AnswerTurn(text), Step::Woken(Wake::AnswerTurn)) => {
                self.idb_put(Some(text.clone()));
                self.post(Notice::Stored(&text));
                Some(At::AnswerWrite(text))
            }
            (At::AnswerWrite(text), Step::Written(done)) => {
                match (done, &j.rec) {
                    (Err(reason), Some(rec)) => {
                        let rec = rec.clone();
                        self.idb_failed(&rec.key, reason);
                        self.mirror(&rec, &text);
                        self.post(Notice::Stored(&text));
                    }
                    // IndexedDB has the answer the page shows (unless an end in this page
                    // showed a new key meanwhile: only this page can change it while it
                    // holds the lock).
                    (Ok(()), _) if self.shown == Shown::Stored => self.shown = Shown::Committed,
                    _ => {}
                }
                self.release_lock();
                None
            }
            (At::WaitedOut, Step::Locked | Step::Read(_) | Step::Written(_)) => {
                self.release_lock();
                None
            }
            (At::WaitedOut, Step::Start) => None,
            (at, _) => Some(at),
        };
        next.map(|at| {
            j.at = at;
            j
        })
    }

    /// With the lock and the record: the answer of the attempt ended since the submit was
    /// called, which it belongs to, or `outcome-unknown` (`abandoned`) where that attempt
    /// has none for this payload; else core's plan (which includes "another tab failed this
    /// very payload while we waited: its answer is ours"), then the first try.
    /// `rev`: the highest `rev` the lock holder read, which a record stored for the first
    /// time counts on from (a new attempt, or a copy only the mirror held, now the scope's).
    fn submit_plan(&mut self, j: &mut SubmitJob, cur: Current, rev: u64) -> Option<At> {
        // An attempt ended since the call with no answer yet, for this very payload, which
        // the page showed when the submit (or the one it resumes) was called: it is the
        // submit's own attempt, gone on with under its own key (the server answers it once),
        // never under a new one. Any other such attempt is not gone on with: a page that
        // did not show it cannot tell it from one ended before the call whose mark it could
        // not list (the scope's flag removed), whose key no later order may send.
        if let Current::Ended(r) = &cur {
            let own = self.resume.as_ref().is_some_and(|x| x.key == r.key);
            if own
                && !j.abandoned
                && r.fingerprint.as_deref() == Some(&j.fp)
                && r.response.is_none()
            {
                let mut rec = r.clone();
                self.set_shown(&rec, Shown::Stored, true);
                rec.state = State::Pending;
                j.resumes_ended = true;
                j.rec = Some(rec);
                return self.next_try(j);
            }
        }
        let ended = match &cur {
            Current::Ended(r) => Some(Some(r)),
            Current::Lost => Some(None),
            _ => None,
        };
        if let Some(ended) = ended {
            // Its answer for this payload, or outcome-unknown: never a try.
            let answer = ended.filter(|r| r.fingerprint.as_deref() == Some(&j.fp));
            let attempts = ended.map_or(0, |r| r.attempts);
            let outcome = answer
                .and_then(cached)
                .ok_or_else(|| unknown(attempts, "abandoned".into(), true));
            self.release_lock();
            self.settle(j.no, outcome);
            return None;
        }
        let mut rec = self.take(cur);
        let now = self.host.now_ms();
        let seen_failed = j.seen_failed.as_deref() == Some(rec.key.as_str());
        match plan_submit_since(&rec, &j.fp, now, seen_failed) {
            SubmitPlan::Cached => {
                if let Some(reply) = cached(&rec) {
                    self.release_lock();
                    self.settle(j.no, Ok(reply));
                    return None;
                }
            }
            SubmitPlan::Conflict => {
                self.release_lock();
                let state = rec.state.as_str();
                self.settle(j.no, Err(Error::PayloadConflict { state }));
                return None;
            }
            SubmitPlan::Send { new_key: true } => rec = self.fresh(),
            SubmitPlan::Send { new_key: false } => {
                use super::mutation::{on, Mutation};
                if on(Mutation::RotateAfterUnknown)
                    && rec.state == State::Pending
                    && rec.attempts > 0
                {
                    rec = self.fresh();
                }
            }
        }
        if rec.fingerprint.as_deref() != Some(&j.fp) {
            // The payload is bound to the key now.
            rec.fingerprint = Some(j.fp.clone());
        }
        rec.state = State::Pending;
        if rec.rev == 0 {
            rec.rev = rev;
        }
        j.rec = Some(rec);
        self.next_try(j)
    }

    /// The backoff after a try that failed for `reason` is over: the next try, unless the
    /// browser ended the wait so late (a background tab's timers are slowed, a frozen tab's
    /// stopped) that the submit's budget or the key's lifetime has run out. Then the submit
    /// ends as a wait past the deadline does: `outcome-unknown`, nothing sent.
    fn after_wait(&mut self, j: &mut SubmitJob, reason: String) -> Option<At> {
        let sent = j.rec.as_ref()?.attempts;
        if let Some(e) = self.held_back(j, sent, &reason) {
            self.release_lock();
            self.settle(j.no, Err(e));
            return None;
        }
        self.next_try(j)
    }

    /// Why the next try of `j` (`sent` tries out so far) may not go out now, if it may
    /// not: its key was given up, here (`abandoned`) or in a page whose mark is found (a
    /// page restored from the back/forward cache, a background tab: `outcome-unknown`,
    /// reason `abandoned`); or the browser ran this so late (slowed or frozen timers, a
    /// thawed tab) that the submit's budget or the key's lifetime is over
    /// (`outcome-unknown` with `reason`, the last try's failure).
    fn held_back(&mut self, j: &SubmitJob, sent: u32, reason: &str) -> Option<Error> {
        let rec = j.rec.clone()?;
        let now = self.host.now_ms();
        if j.abandoned || (!j.resumes_ended && self.ended_here(&rec)) {
            return Some(unknown(sent, "abandoned".into(), true));
        }
        let late = j.send.retry_policy().out_of_time(j.spent(now))
            || rec.is_expired(now)
            || super::mutation::on(super::mutation::Mutation::ResumeGivesUp) && sent > 0;
        late.then(|| unknown(sent, reason.into(), false))
    }

    /// Counts the next try and stores it before it leaves; `outcome-unknown` (abandoned)
    /// when the key was given up: sending on would re-send a key the page gave up on, and
    /// hold the lock so the new attempt waits behind these retries.
    fn next_try(&mut self, j: &mut SubmitJob) -> Option<At> {
        let now = self.host.now_ms();
        let rec = j.rec.as_mut()?;
        if j.abandoned {
            let e = unknown(rec.attempts, "abandoned".into(), true);
            self.release_lock();
            self.settle(j.no, Err(e));
            return None;
        }
        rec.attempts += 1;
        rec.updated_at = now;
        let mut rec = rec.clone();
        // An attempt a page ended is not stored again, its tries nor its answer, nor posted:
        // its key is in its mark and its record, and the scope's record may by then be the
        // next order's, which a tab without IndexedDB keeps in localStorage alone.
        if j.resumes_ended {
            j.rec = Some(rec);
            return self.launch(j, String::new());
        }
        let stored = self.store(&mut rec);
        j.rec = Some(rec.clone());
        match stored {
            Ok(Stage::Write { text, .. }) => Some(At::Storing(text)),
            Ok(_) => None,
            Err(text) => {
                self.stored(&rec, &text, None);
                self.launch(j, text)
            }
        }
    }

    /// Sends the try the record counts, once stored as `text`: the `attempt` event, the
    /// request, then the notice (the other tabs hear of the try once it is on its way), but
    /// not of a try of an attempt a page ended, which is neither stored nor posted.
    fn launch(&mut self, j: &SubmitJob, text: String) -> Option<At> {
        let rec = j.rec.as_ref()?;
        let o = &j.send;
        self.emit(
            &rec.key,
            EventKind::Attempt {
                attempt: rec.attempts,
            },
        );
        let left = o.deadline_ms as f64 - (self.host.now_ms() - j.started);
        let request = Request {
            send: o.clone(),
            key_value: format_key(&rec.key, o.header_format),
            body: j.body.clone(),
            timeout_ms: (o.timeout_ms as f64).min(left).max(1.0),
        };
        self.out.push(Command::Send(request));
        // The attempt this submit is in is the one it sent, whatever the page showed when it
        // was called: Pay pressed again goes on under this key, even once it ended. (Where
        // the last submit is another, of another payload, queued behind this one, it sends
        // its own key before it settles, or none: going on needs this payload's attempt.)
        if let Some(r) = &mut self.resume {
            r.key = rec.key.clone();
        }
        if !j.resumes_ended {
            self.post(Notice::Stored(&text));
        }
        Some(At::Sending)
    }

    /// The try ended with `sent`: its events, then the final answer stored, the wait
    /// before the next try, or `outcome-unknown`.
    fn after_try(&mut self, j: &mut SubmitJob, sent: Result<Answer, NoAnswer>) -> Option<At> {
        let now = self.host.now_ms();
        let mut rec = j.rec.clone()?;
        let (outcome, retry_after) = match sent {
            Ok(a) => {
                let replayed = is_replayed(a.replayed.as_deref());
                self.emit(
                    &rec.key,
                    EventKind::Response {
                        attempt: rec.attempts,
                        status: a.status,
                        replayed,
                    },
                );
                let done = match classify(a.status) {
                    Class::Success => Some(State::Succeeded),
                    Class::Failure => Some(State::Failed),
                    Class::Retry => None,
                };
                if let Some(state) = done {
                    rec.state = state;
                    rec.updated_at = now;
                    rec.response = Some(StoredResponse {
                        status: a.status,
                        body: a.body,
                        replayed,
                    });
                    let mut reply = cached(&rec)?;
                    reply.from_cache = false;
                    j.rec = Some(rec);
                    return self.final_answer(j, reply);
                }
                let host = &mut self.host;
                let ra = a
                    .retry_after
                    .and_then(|v| retry_after_ms(&v, now, |date| host.http_date_ms(date, now)));
                (TryOutcome::Response(a.status), ra)
            }
            Err(NoAnswer::Network) => (TryOutcome::NetworkError, None),
            Err(NoAnswer::Timeout) => (TryOutcome::Timeout, None),
        };
        let reason = outcome.reason();
        let r = random01(&mut self.host);
        match j
            .send
            .retry_policy()
            .next(j.retries, j.spent(now), retry_after, r)
        {
            Next::Retry { delay_ms } => {
                let kind = EventKind::Retry {
                    attempt: rec.attempts,
                    delay_ms,
                    reason: reason.clone(),
                };
                self.emit(&rec.key, kind);
                self.out.push(Command::Wake {
                    ms: delay_ms as f64,
                    wake: Wake::Retry,
                });
                Some(At::Waiting(reason))
            }
            Next::GiveUp => {
                self.release_lock();
                self.settle(j.no, Err(unknown(rec.attempts, reason, false)));
                None
            }
        }
    }

    /// Stores the final answer: the submit settles once the mirror has it, and the lock is
    /// held until IndexedDB has it too, a turn later: the code awaiting `submit()` runs
    /// first. A page that goes away in between leaves the mirror's copy ahead of the
    /// store's, and the next lock holder that reads it goes on from it (core::sync's
    /// `store_missed`); where the mirror is the tab's own (sessionStorage, page memory), a
    /// holder in another tab goes on from the copy posted to it, or from the pending record
    /// IndexedDB still holds, whose key the server answers once. Not later: a write held
    /// up behind a transaction of a tab the browser froze would keep the answer from the
    /// customer past the deadline.
    fn final_answer(&mut self, j: &mut SubmitJob, reply: Reply) -> Option<At> {
        let mut rec = j.rec.clone()?;
        if j.resumes_ended {
            self.show(&rec, Shown::Stored);
            self.release_lock();
            self.settle(j.no, Ok(reply));
            return None;
        }
        self.count(&mut rec);
        let text = rec.encode();
        j.rec = Some(rec.clone());
        self.mirror(&rec, &text);
        if !self.idb {
            // Without IndexedDB the mirror is the store: done.
            self.post(Notice::Stored(&text));
            self.release_lock();
            self.settle(j.no, Ok(reply));
            return None;
        }
        self.settle(j.no, Ok(reply));
        self.out.push(Command::Wake {
            ms: 0.0,
            wake: Wake::AnswerTurn,
        });
        Some(At::AnswerTurn(text))
    }
}
