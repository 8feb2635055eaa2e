//! A stored answer as `submit()` resolves with it: from the record the lock holder reads,
//! or read without the lock when the page shows the attempt's success, which resolving
//! with changes nothing stored (the lock orders changes; it is not needed to read one).

use super::host::Host;
use super::io::{Command, Reply};
use super::mutation::{on, Mutation};
use super::state::{At, Scope, SubmitJob};
use crate::core::plan::{plan_submit, SubmitPlan};
use crate::core::record::Record;
use crate::core::state::State;
use crate::core::sync::{on_lock, Current, Shown};
use crate::error::Error;
use crate::prelude::*;

/// The stored result `rec` holds, if any, as `submit()` resolves with it.
pub(super) fn cached(rec: &Record) -> Option<Reply> {
    rec.response.as_ref().map(|r| Reply {
        key: rec.key.clone(),
        status: r.status,
        body: r.body.clone(),
        replayed: r.replayed,
        from_cache: true,
        attempts: rec.attempts,
    })
}

impl<H: Host> Scope<H> {
    /// A submit's first move: where the page shows a succeeded attempt of this payload,
    /// its stored answer without the lock, from the page's memory where this page
    /// committed it to IndexedDB (an end mark, the record's expiry or a newer copy in Web
    /// Storage still send the submit the locked way), else read there; otherwise the lock.
    pub(super) fn submit_start(&mut self, j: &SubmitJob) -> Option<At> {
        let shown_cached =
            self.rec.state == State::Succeeded && self.rec.fingerprint.as_deref() == Some(&j.fp);
        if shown_cached && self.shown == Shown::Committed {
            let shown = self.rec.clone();
            if on(Mutation::CommittedUnchecked) {
                self.settle(
                    j.no,
                    cached(&shown).ok_or(Error::InvalidPayload(String::new())),
                );
                return None;
            }
            // As IndexedDB would answer: the text of what the page committed there, decoded
            // again by the one path that weighs it (deciding from the record itself took
            // more of the module's bytes).
            return self.submit_cached(j, &shown, Ok(Some(shown.encode())));
        }
        if shown_cached && self.idb {
            self.out.push(Command::IdbPeek {
                key: self.rec_key.clone(),
            });
            return Some(At::Cached(self.rec.clone()));
        }
        self.take_lock()
    }

    /// The stored answer, if IndexedDB's record (`got`: read there, or the text of the one
    /// this page committed) and the mirror's are still the attempt's success: what the
    /// lock holder would go on from ([`on_lock`]). Resolving with it changes nothing
    /// stored, so the lock, which orders changes, is not needed. Anything unreadable sends
    /// the submit the locked way.
    pub(super) fn submit_cached(
        &mut self,
        j: &SubmitJob,
        shown: &Record,
        got: Result<Option<String>, String>,
    ) -> Option<At> {
        if let Some(reply) = self.stored_answer(j, shown, got) {
            self.settle(j.no, Ok(reply));
            return None;
        }
        self.take_lock()
    }

    /// The stored answer, if IndexedDB's record (`got`: read there, or the text of the one
    /// this page committed) and the mirror's are still the attempt's success (see
    /// [`Scope::submit_start`]).
    pub(super) fn stored_answer(
        &mut self,
        j: &SubmitJob,
        shown: &Record,
        got: Result<Option<String>, String>,
    ) -> Option<Reply> {
        let stored = got.ok()?;
        // Where the lock holder looks too: the first backend holding the record. A copy of
        // what IndexedDB holds is no news (same key, same `rev`): read once.
        let at = self.rec_key.clone();
        let text = super::mirror::ALL
            .into_iter()
            .find_map(|k| self.host.storage_get(k, &at).ok().flatten())
            .filter(|t| Some(t) != stored.as_ref());
        let stored = self.decode_in_scope(stored)?;
        let mirror = self.decode_in_scope(text)?;
        let now = self.host.now_ms();
        let Current::Stored(r) = on_lock(stored, true, mirror, Some(shown), self.shown, now) else {
            return None;
        };
        // Only a succeeded attempt of this payload is planned as answered.
        if plan_submit(&r, &j.fp, now) == SubmitPlan::Cached {
            cached(&r)
        } else {
            None
        }
    }

    /// `Some(None)` for no text or an attempt a page ended, `Some(record)` for this scope's,
    /// `None` for anything else.
    fn decode_in_scope(&mut self, text: Option<String>) -> Option<Option<Record>> {
        match text {
            None => Some(None),
            Some(t) => {
                let r = self.decode(&t).ok()?;
                (r.scope == self.opts.scope).then(|| self.live(Some(r)))
            }
        }
    }
}
