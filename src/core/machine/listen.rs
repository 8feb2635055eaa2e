//! What a scope hears from the other tabs: the channel's notices and, where that is
//! missing, the `storage` event of the Web Storage copy. Each shows another tab's newer
//! record here (core::sync decides what is newer), or stops this page's submit before its
//! next try when another tab gave its key up.

use super::host::Host;
use super::state::Scope;
use crate::core::ended::{holds, Mark};
use crate::core::sync::{removes, supersedes, Notice};
use crate::prelude::*;

impl<H: Host> Scope<H> {
    /// A notice from the channel.
    pub(super) fn on_notice(&mut self, text: &str) {
        match Notice::parse(text) {
            Some(Notice::Stored(t)) => self.take_copy(t),
            Some(Notice::Removed(k)) => self.take_removal(k),
            Some(Notice::Abandon(text)) => self.heard_abandon(text),
            None => {}
        }
    }

    /// Another tab gave a key up: this page's submit sending with it stops before its next
    /// try, and the mark is written here too, where the giving-up page's own write may reach
    /// late (localStorage comes to other tabs late; the channel's notice may come first).
    fn heard_abandon(&mut self, text: &str) {
        let Some(mark) = Mark::decode(text) else {
            return self.abandon(Some(text));
        };
        self.abandon(Some(&mark.key));
        if !holds(&self.ended(), &mark) {
            self.end(mark);
        }
    }

    /// The `storage` event of the record's key in the store's backend: written (`new`) or
    /// removed (`old` was there). The same news twice is harmless.
    pub(super) fn on_storage(&mut self, new: Option<String>, old: Option<String>) {
        match (new, old) {
            (Some(text), _) => self.take_copy(&text),
            (None, Some(old)) => {
                if let Ok(r) = self.decode(&old) {
                    self.take_removal(&r.key);
                }
            }
            (None, None) => {}
        }
    }

    /// Another tab stored `text`: shown here if it is newer than what this page shows, and
    /// not an attempt a page ended (a copy written before, arriving late).
    fn take_copy(&mut self, text: &str) {
        let Some(r) = self.live(self.decode(text).ok()) else {
            return;
        };
        if r.scope == self.opts.scope && supersedes(&r, &self.rec, self.rec_stored) {
            self.show(&r, true);
        }
    }

    /// Another tab removed the record of `key`: this page's next attempt gets a new key.
    fn take_removal(&mut self, key: &str) {
        if removes(key, &self.rec, self.rec_stored) {
            let next = self.fresh();
            self.show(&next, false);
        }
    }
}
