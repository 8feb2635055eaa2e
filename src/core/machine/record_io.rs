//! The two things every job does with the scope's lock: read the record as the last
//! holder left it (IndexedDB and the Web Storage mirror, core::sync deciding what to go on
//! from), and store one for every tab (IndexedDB first, then the mirror, then the notice).

use super::host::Host;
use super::io::Command;
use super::io::EventKind;
use super::mutation::{on, Mutation};
use super::state::Scope;
use super::state::{Stage, SubmitJob};
use crate::core::ended::{belongs, covers, Belongs};
use crate::core::record::Record;
use crate::core::sync::{began_after, may_lead, on_lock, Current, Shown};
use crate::prelude::*;

impl<H: Host> Scope<H> {
    /// Reads the record with the lock: asks IndexedDB (whether it answers, `true`) when it
    /// holds the record.
    pub(super) fn read_begin(&mut self) -> bool {
        use super::mutation::{on, Mutation::SkipReRead};
        if self.idb && !on(SkipReRead) {
            self.out.push(Command::IdbGet {
                key: self.rec_key.clone(),
            });
        }
        self.idb && !on(SkipReRead)
    }

    /// What the lock holder goes on from, for a submit called when the page had heard of
    /// the ended attempts in `heard`, once IndexedDB answered `got` (`None`: not asked):
    /// the attempt ended since the submit was called, if it belongs to one (core::ended's
    /// [`belongs`]); else core::sync's [`on_lock`] of IndexedDB's record and the mirror's,
    /// ended attempts left out. With it, the highest `rev` of the records read, IndexedDB's
    /// and the mirror's, ended ones included: a new attempt's stores count on from it.
    pub(super) fn current_of(
        &mut self,
        got: Option<Result<Option<String>, String>>,
        j: &SubmitJob,
    ) -> (Current, u64) {
        let heard = &j.heard;
        let mut idb_text = None;
        let skip = matches!(got, Some(Err(_))) && on(Mutation::FailedReadSkipsCopy);
        match got {
            Some(Ok(t)) => idb_text = Some(t),
            Some(Err(reason)) => {
                let key = self.rec.key.clone();
                self.idb_failed(&key, reason);
            }
            None => {}
        }
        // Always read: the mirror may hold a write IndexedDB refused.
        // The marks, read once for every decision below.
        let marks = self.ended();
        let web = self.read_mirror_any(Some(&marks)).map(|(_, r)| r);
        let web = web.filter(|_| !skip);
        let now = self.host.now_ms();
        // IndexedDB answered (a record, or none): else localStorage is the store read.
        let held = idb_text.is_some();
        let (stored, mirror) = match idb_text {
            Some(Some(t)) => match self.decode_or_set_aside(&t) {
                Some(r) => (Some(r), web),
                // Set aside: the store held a record it can no longer read, not one a tab
                // finished. The mirror's live copy, if any, is what is left of it: gone on
                // from, and stored again in its place.
                None => match web.filter(|m| !m.is_expired(now)) {
                    Some(m) => {
                        let rev = m.rev;
                        return (Current::Legacy(m), rev);
                    }
                    None => (None, None),
                },
            },
            Some(None) => (None, web),
            None => (web, None),
        };
        let rev = stored.iter().chain(&mirror).fold(0, |n, r| n.max(r.rev));
        let found = match on_lock(
            stored.clone(),
            held,
            mirror.clone(),
            None,
            Shown::Stored,
            now,
        ) {
            Current::Stored(r) | Current::Legacy(r) => Some(r),
            _ => None,
        };
        // The marks of the attempts in play, read by their own entries too, as `open()` and
        // the check before a try read them: a mark whose flag is gone is not listed.
        let mut marks = marks;
        let key = found.as_ref().unwrap_or(&self.rec).key.clone();
        marks += &self.marks_of(Some(&key));
        if key != self.rec.key {
            let key = self.rec.key.clone();
            marks += &self.marks_of(Some(&key));
        }
        // This page's attempt, which its last submit of the payload left unknown, gave way in
        // the store to one begun after it, or in the page to another tab's copy of one: a
        // pending or paid record is replaced only once its attempt ended, so an end this
        // page has not heard of yet (its mark still on its way through localStorage) ended
        // it, and the submit belongs to it, whose record is gone (what core::ended's
        // `belongs` says once the mark is here).
        let r = &self.rec;
        let replaced = |f: &Record| f.key != r.key && began_after(f, r);
        if j.own
            && (self.replaced
                || r.state.ends_when_replaced() && found.as_ref().is_some_and(replaced))
        {
            return (Current::Lost, rev);
        }
        let heard = if on(Mutation::HeardAtLock) {
            &marks
        } else {
            heard
        };
        match belongs(found.as_ref(), &marks, heard) {
            _ if on(Mutation::DropEndedAnswer) => {}
            Belongs::Ended => return (found.map_or(Current::Lost, Current::Ended), rev),
            Belongs::Lost => return (Current::Lost, rev),
            Belongs::Live => {}
        }
        // An attempt a page ended is no record any more, whatever the store holds.
        let live = |r: Option<Record>| r.filter(|r| !covers(&marks, r));
        let (stored, mirror) = (live(stored), live(mirror));
        let quiet = stored.is_none() && mirror.is_none();
        let shown = Some(&self.rec).filter(|r| !covers(&marks, r));
        let cur = match on_lock(stored, held, mirror, shown, self.shown, now) {
            Current::Legacy(_) if quiet && on(Mutation::ShownReplaced) => Current::Fresh,
            cur => cur,
        };
        (cur, rev)
    }

    /// What [`Scope::current_of`] told, as a record shown in this page. Only a key made
    /// here is shown as made (any copy replaces it): a record the store lacks (another
    /// tab's copy, or the mirror's) was stored by a tab and may have charged, so it is shown
    /// as posted, and a copy of an attempt begun before it (sent again by a tab that read
    /// the store late) does not replace it where no write moves it into the store (a Pay
    /// answered from it).
    pub(super) fn take(&mut self, cur: Current) -> Record {
        let (rec, from) = match cur {
            Current::Stored(r) => (r, Shown::Stored),
            Current::Legacy(r) => (r, Shown::Posted),
            Current::Mine => (self.rec.clone(), Shown::Made),
            Current::Fresh | Current::Ended(_) | Current::Lost => (self.fresh(), Shown::Made),
        };
        self.show(&rec, from);
        rec
    }

    /// Starts storing `rec` (its `rev` counted up) for every tab: `Ok` with the stage to
    /// wait in for IndexedDB, or `Err` with its text when only the mirror holds it (then
    /// [`Scope::stored`] follows at once). A pending record's mirror copy is written at
    /// once (core::sync's [`may_lead`]), in the task that asks IndexedDB for the write (a
    /// submit's read), not in the task of its answer: a page pays for the first Web
    /// Storage write of a task (about 60 us in Chromium), and the following ones cost
    /// little. Any other record's copy follows IndexedDB's answer.
    pub(super) fn store(&mut self, rec: &mut Record) -> Result<Stage, String> {
        self.count(rec);
        let text = rec.encode();
        if self.idb {
            self.idb_put(Some(text.clone()));
            if may_lead(rec) {
                self.mirror(rec, &text);
            }
            return Ok(Stage::Write {
                rec: rec.clone(),
                text,
            });
        }
        Err(text)
    }

    /// Counts a store of `rec` in its `rev`: with IndexedDB, one more than the count read;
    /// without it, none (`rev` 0, in localStorage and on the channel alike). A tab without
    /// IndexedDB reads its own copies uncounted, so a count of its would start again below
    /// IndexedDB's, and every other tab would take its later attempts for earlier ones.
    pub(super) fn count(&self, rec: &mut Record) {
        rec.rev = if self.idb { rec.rev + 1 } else { 0 };
    }

    /// A store of `rec` (as `text`) done once IndexedDB answered `done` (`None`: not
    /// used; the notice to the other tabs is the caller's): the mirror written where
    /// [`Scope::store`] did not, or written again as a copy the store does not hold when
    /// IndexedDB failed. Where it was written already, `rec` is shown again, over any
    /// other tab's copy shown while the write was under way (a late one: this page holds
    /// the lock).
    pub(super) fn stored(&mut self, rec: &Record, text: &str, done: Option<Result<(), String>>) {
        match done {
            Some(Ok(())) if may_lead(rec) => return self.show(rec, Shown::Stored),
            Some(Err(reason)) => {
                // Named after the key shown, which a new attempt's record is not yet.
                let shown = self.rec.key.clone();
                self.idb_failed(&shown, reason);
            }
            _ => {}
        }
        self.mirror(rec, text);
    }

    /// Asks IndexedDB to write `text` (`None` deletes) under the record's key.
    pub(super) fn idb_put(&mut self, text: Option<String>) {
        self.out.push(Command::IdbPut {
            key: self.rec_key.clone(),
            text,
        });
    }

    /// Writes `text`, the encoded `rec`, to the Web Storage mirror and shows it here. Text
    /// in the way that cannot be read (edited by hand, another version) is set aside with
    /// its event first, not overwritten unseen. Where IndexedDB does not hold the record,
    /// the copy is written with `rev` 0 (see core::sync's `store_missed`). A copy of the
    /// same attempt that the backend refuses to replace (its quota) stays there: another
    /// tab that reads it sends that key again, and without IndexedDB it is the only copy
    /// the tabs share; a copy of another attempt is removed.
    pub(super) fn mirror(&mut self, rec: &Record, text: &str) {
        let kind = self.store.kind();
        let same_attempt = self.read_in(kind).is_some_and(|old| old.key == rec.key);
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
        let fb = self.store.set(&mut self.host, &at, web, same_attempt);
        let key = self.rec.key.clone();
        self.report(&key, fb);
        self.show(rec, Shown::Stored);
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
