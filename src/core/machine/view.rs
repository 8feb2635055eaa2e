//! What a scope's machine shows the page and reads from Web Storage: the record shown and
//! its events, the mirror read (an unreadable copy set aside), and the namespace's sweep.

use super::host::{new_key, Host};
use super::io::{Command, EventKind};
use super::mirror::{Fallback, ALL};
use super::state::Scope;
use crate::core::ended::covers;
use crate::core::options::{Options, StorageKind};
use crate::core::record::{quarantine_key, Record};
use crate::core::state::State;
use crate::core::sweep::{flag_due, lists_marks, sweep_due};
use crate::core::sync::{newer, Notice, Shown};
use crate::prelude::*;

/// A new record (new key, state fresh) for the scope of `opts`.
pub(super) fn fresh(host: &mut impl Host, opts: &Options) -> Record {
    let key = new_key(host);
    let now = host.now_ms();
    Record::new(key, opts.scope.as_str(), now, opts.ttl_ms())
}

impl<H: Host> Scope<H> {
    /// A new record (new key, state fresh) for this scope.
    pub(super) fn fresh(&mut self) -> Record {
        fresh(&mut self.host, &self.opts)
    }

    /// Whether the record is shared with the other tabs, so that taking a turn needs the
    /// Web Lock: held in IndexedDB, or in localStorage once IndexedDB failed (the page has
    /// Web Locks in both cases: without them `open()` made the record the tab's own).
    pub(super) fn shared_with_tabs(&self) -> bool {
        self.idb || (self.listening && self.store.kind() == StorageKind::Local)
    }

    /// Deletes what core's sweep rules say is due under the namespace (the flags of ended
    /// attempts once the entries they flag are gone and their end has expired): in the
    /// store's backend now, in IndexedDB through the driver where the record is shared.
    /// A mark of this scope among the entries listed tells the page the scope has ended
    /// attempts (`ends`, never cleared here: `open()`'s read of the copies may have set it),
    /// so that it lists their marks whatever the flag.
    pub(super) fn sweep(&mut self) {
        let mut prefix = self.opts.namespace.clone();
        prefix.push(':');
        let kind = self.store.kind();
        let keys = self.host.storage_keys(kind, &prefix);
        self.ends |= lists_marks(&self.opts.namespace, &self.opts.scope, &keys)
            && !super::mutation::on(super::mutation::Mutation::SweepIgnoresMarks);
        let now = self.host.now_ms();
        for k in &keys {
            let v = self.host.storage_get(kind, k).ok().flatten();
            if v.is_some_and(|v| {
                self.due(k, &v) || flag_due(&self.opts.namespace, k, &v, now, &keys)
            }) {
                self.host.storage_remove(kind, k);
            }
        }
        if self.idb {
            self.out.push(Command::IdbSweep { prefix });
        }
    }

    /// Whether the storage entry `key` holding `value` is due for the sweep of this scope's
    /// namespace, now.
    pub fn due(&mut self, key: &str, value: &str) -> bool {
        let now = self.host.now_ms();
        sweep_due(&self.opts.namespace, key, value, now, |t| {
            self.host.decode_record(t)
        })
    }

    /// The old double charge of two tabs, for the simulator to find: the key shown stored
    /// as the record at `open()`, over whatever another tab stored and this one never read.
    pub(super) fn store_shown(&mut self) {
        self.rec.rev += 1;
        self.shown = Shown::Stored;
        let text = self.rec.encode();
        let key = self.rec.key.clone();
        let at = self.rec_key.clone();
        let fb = self.store.set(&mut self.host, &at, &text, false);
        self.report(&key, fb);
    }

    /// The record in Web Storage or memory: the newest copy of the backends (the store's
    /// own, or one an earlier fallback left it in: a full localStorage keeps an older copy
    /// of the attempt whose later states went to sessionStorage), the best backend's on a
    /// tie; not an attempt a page ended. An unreadable one is set
    /// aside and the search goes on.
    pub(super) fn read_mirror(&mut self) -> Option<Record> {
        self.read_mirror_any(None)
            .filter(|(live, _)| *live)
            .map(|(_, r)| r)
    }

    /// [`Scope::read_mirror`], an attempt a page ended included where no copy is live: a
    /// live copy beats an ended one whatever their times (a clock set back makes the next
    /// attempt look older than the one it follows); with whether it is live.
    /// `ended`: the marks of ended attempts, as read once by the caller; `None` reads each
    /// copy's own (a scope's ended attempts outnumber its copies, and listing them goes
    /// through every entry of the origin's storage).
    pub(super) fn read_mirror_any(&mut self, ended: Option<&str>) -> Option<(bool, Record)> {
        let mut found: Option<(bool, Record)> = None;
        for kind in ALL {
            if let Some(r) = self.read_in(kind) {
                let live = match ended {
                    Some(text) => !covers(text, &r),
                    None => !self.ended_here(&r),
                };
                let beats = found
                    .as_ref()
                    .is_none_or(|(l, f)| (live && !l) || (live == *l && newer(&r, f)));
                if beats {
                    found = Some((live, r));
                }
            }
        }
        found
    }

    /// The record in backend `kind`; unreadable text there is set aside and removed.
    pub(super) fn read_in(&mut self, kind: StorageKind) -> Option<Record> {
        let at = self.rec_key.clone();
        let text = self.host.storage_get(kind, &at).ok().flatten()?;
        let r = self.decode_or_set_aside(&text);
        if r.is_none() {
            self.host.storage_remove(kind, &at);
        }
        r
    }

    /// A stored record's text as this page reads it; an unreadable one (or another
    /// scope's) is copied to a quarantine key with a `storage-corrupt` event.
    pub(super) fn decode_or_set_aside(&mut self, text: &str) -> Option<Record> {
        let reason = match self.decode(text) {
            Ok(r) if r.scope == self.opts.scope => return Some(r),
            Err(e) => e.message(),
            Ok(_) => "record belongs to another scope".into(),
        };
        let now = self.host.now_ms();
        let q = quarantine_key(&self.opts.namespace, &self.opts.scope, now);
        let fb = self.store.set(&mut self.host, &q, text, false);
        // The key the checkout will use next: the one shown.
        let key = self.rec.key.clone();
        self.report(&key, fb);
        self.emit(
            &key,
            EventKind::StorageCorrupt {
                reason,
                quarantine_key: q,
            },
        );
        None
    }

    /// Decoded, its expiry capped by this scope's `ttlSeconds`.
    pub(super) fn decode(&self, text: &str) -> crate::error::Result<Record> {
        let mut r = self.host.decode_record(text)?;
        r.limit_ttl(self.opts.ttl_ms());
        Ok(r)
    }

    /// Makes `rec` what the page shows (`stored`: it is the scope's stored record); never
    /// an attempt a page ended (this page's own submit stores the answer of a try that was
    /// on the wire when the page ended its attempt: the page shows the new key), nor another
    /// key's expired record, whose end's mark the sweep may have deleted by then.
    pub(super) fn show(&mut self, rec: &Record, from: Shown) {
        let now = self.host.now_ms();
        if rec.key == self.rec.key || !(rec.is_expired(now) || self.ended_here(rec)) {
            self.set_shown(rec, from, true);
        }
    }

    /// [`Scope::show`] at once, with a `state` event when the state changed; with
    /// `announce`, a `key-changed` event when the key did (not for the new key of this
    /// page's own `reset()` or `finish()`).
    pub(super) fn set_shown(&mut self, rec: &Record, from: Shown, announce: bool) {
        let prev = core::mem::replace(&mut self.rec, rec.clone());
        // The attempt this page committed, read again from the store, stays the page's own.
        if from != Shown::Stored || self.shown != Shown::Committed || prev.key != rec.key {
            self.shown = from;
        }
        if announce && prev.key != rec.key {
            self.emit(&rec.key, EventKind::KeyChanged { previous: prev.key });
        }
        self.state_changed(rec, prev.state);
    }

    /// A `state` event when `previous` differs from `rec.state`.
    pub(super) fn state_changed(&mut self, rec: &Record, previous: State) {
        if previous != rec.state {
            let kind = EventKind::State {
                state: rec.state.as_str(),
                previous: previous.as_str(),
            };
            self.emit(&rec.key, kind);
        }
    }

    /// `storage-fallback` events for the backends that failed.
    pub(super) fn report(&mut self, key: &str, fallbacks: Vec<Fallback>) {
        for f in fallbacks {
            let kind = EventKind::StorageFallback {
                from: f.from.as_str(),
                to: f.to.as_str(),
                reason: f.reason,
            };
            self.emit(key, kind);
        }
    }

    /// Posts a notice to the scope's other tabs (where the record is shared).
    pub(super) fn post(&mut self, n: Notice) {
        if self.listening {
            self.out.push(Command::Post {
                name: self.rec_key.clone(),
                text: n.encode(),
            });
        }
    }
}
