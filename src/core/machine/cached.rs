//! A stored answer as `submit()` resolves with it: from the record the lock holder reads,
//! or read without the lock when the page shows the attempt's success, which resolving
//! with changes nothing stored (the lock orders changes; it is not needed to read one).

use super::host::Host;
use super::io::Reply;
use super::state::{Scope, SubmitJob};
use crate::core::plan::{plan_submit, SubmitPlan};
use crate::core::record::Record;
use crate::core::sync::{on_lock, Current};
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
    /// The stored answer, if IndexedDB's record (`got`: read there, or the text of the one
    /// this page committed) and the mirror's are still the attempt's success (see
    /// [`super::submit`]'s first move).
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
