//! The attempts ended by `finish()` and `reset()` as a scope's machine reads and writes
//! them (core::ended holds the rules): written to the store's Web Storage backend before
//! the call returns, read from every backend an earlier fallback may have left them in.

use super::host::Host;
use super::mirror::ALL;
use super::mutation::{on, Mutation};
use super::state::Scope;
use crate::core::ended::{bound, covers, Mark};
use crate::core::options::StorageKind;
use crate::core::record::{ended_key, ends_key, Record};
use crate::prelude::*;

impl<H: Host> Scope<H> {
    /// The stored marks of every backend, as one text: each mark's own entry (not those of
    /// a scope whose name goes on after a `:`, whose entries start the same).
    pub(super) fn ended(&mut self) -> String {
        self.marks_of(None)
    }

    /// [`Scope::ended`], or with `key`, only what ends that key: its mark's own entry, read
    /// directly rather than by listing every key of every backend (which [`Scope::live`]
    /// would do before every try and for every copy another tab posts). A backend without
    /// the scope's flag ([`ends_key`]) holds no mark of it and is not listed (a listing goes
    /// through every entry of the origin's storage), unless this page knows the scope has
    /// marks (`ends`: it made or heard of an end, read a mark, or its sweep listed one): a
    /// script may remove the flag. A mark found by its own entry where the flag is missing
    /// gets its flag back.
    #[inline(never)]
    pub(super) fn marks_of(&mut self, key: Option<&str>) -> String {
        let prefix = ended_key(&self.opts.namespace, &self.opts.scope) + ":";
        let flag = ends_key(&self.opts.namespace, &self.opts.scope);
        let mut all = String::new();
        for kind in ALL {
            let mut at = match key {
                Some(k) => vec![prefix.clone() + k],
                None if !self.ends
                    && self.host.storage_get(kind, &flag).ok().flatten().is_none() =>
                {
                    continue
                }
                None => self.host.storage_keys(kind, &prefix),
            };
            at.retain(|k| k.as_bytes()[prefix.len()..].iter().all(|&b| b != b':'));
            for k in at {
                if let Ok(Some(text)) = self.host.storage_get(kind, &k) {
                    // A mark read by its own entry where the flag is gone (removed by hand,
                    // or deleted by a sweep as the end was written): the flag is written
                    // again, so that every listing from then on counts the mark.
                    if key.is_some()
                        && !on(Mutation::FlagNotRestored)
                        && self.host.storage_get(kind, &flag) == Ok(None)
                    {
                        let _ = self.host.storage_set(kind, &flag, &text);
                    }
                    self.ends = true;
                    all.push_str(&text);
                    all.push('\n');
                }
            }
        }
        all
    }

    /// Whether `rec` is an attempt a page ended, by its key's own entry.
    #[inline(never)]
    pub(super) fn ended_here(&mut self, rec: &Record) -> bool {
        covers(&self.marks_of(Some(&rec.key)), rec)
    }

    /// `rec` unless it is an attempt a page ended.
    pub(super) fn live(&mut self, rec: Option<Record>) -> Option<Record> {
        let rec = rec?;
        (!self.ended_here(&rec)).then_some(rec)
    }

    /// Ends the attempt of `mark` for every later reader, in this page or any other: the
    /// mark is in Web Storage when this returns (moving down the fallback chain where a
    /// backend refuses it, with its event; the marks there before are kept; a mark is an
    /// entry of its own, so no other page's write, arriving late, takes it away). Returns
    /// whether it is where every page that reads the record reads it: in the backend the
    /// scope was opened for (localStorage, or the tab's sessionStorage without Web Locks),
    /// not one further down the chain, where an earlier copy of the record in a better
    /// backend outlives it for the other tabs or the next page.
    pub(super) fn end(&mut self, mut mark: Mark) -> bool {
        // A key's entry only grows: ended where a page saw it bound, it stays so when a page
        // that saw it fresh ends it later.
        mark.bound |= bound(&self.marks_of(Some(&mark.key)), &mark.key);
        let at = ended_key(&self.opts.namespace, &self.opts.scope) + ":" + &mark.key;
        let flag = ends_key(&self.opts.namespace, &self.opts.scope);
        let key = self.rec.key.clone();
        let line = mark.line();
        self.ends = true;
        // The flag first, then the mark, in the backend that takes the mark: a page that
        // has the mark has the flag (one tab's writes reach another in the order made), and
        // a refused flag takes the mark down the chain with it.
        let before = self.store.kind();
        loop {
            let kind = self.store.kind();
            for k in [&flag, &at] {
                let fb = self.store.set(&mut self.host, k, &line, true);
                self.report(&key, fb);
            }
            if on(Mutation::EndWithoutFlag) {
                self.host.storage_remove(kind, &flag);
            }
            if self.store.kind() == kind {
                break;
            }
        }
        let intended = if self.opts.storage == StorageKind::Local && !self.listening {
            StorageKind::Session
        } else {
            self.opts.storage
        };
        // A refused write moved the store down the chain.
        before == intended && self.store.kind() == before
    }
}
