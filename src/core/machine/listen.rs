//! What a scope hears from the other tabs: the channel's notices and, where that is
//! missing, the `storage` event of the Web Storage copy. Each shows another tab's newer
//! record here (core::sync decides what is newer), or stops this page's submit before its
//! next try when another tab gave its key up.

use super::host::Host;
use super::state::{Lock, Scope};
use crate::core::ended::Mark;
use crate::core::sync::{supersedes, Notice, Shown};
use crate::prelude::*;

impl<H: Host> Scope<H> {
    /// A notice from the channel.
    pub(super) fn on_notice(&mut self, text: &str) {
        match Notice::parse(text) {
            Some(Notice::Stored(t)) => self.take_copy(t),
            Some(Notice::Abandon(text)) => self.heard_abandon(text),
            None => {}
        }
    }

    /// Another tab gave a key up: this page's submit sending with it stops before its next
    /// try, the mark is written here too, where the giving-up page's own write may reach
    /// late (localStorage comes to other tabs late; the channel's notice may come first),
    /// and a page that shows the attempt ended shows a new key.
    fn heard_abandon(&mut self, text: &str) {
        let Some(mark) = Mark::decode(text) else {
            return self.abandon(Some(text));
        };
        self.abandon(Some(&mark.key));
        // Written again where it is there already: Web Storage fires no event for a value
        // set to what it holds. Where this page's storage refuses it, the page that ended it
        // was told.
        let _ = self.end(mark.clone());
        if self.shown != Shown::Made && mark.covers(&self.rec) {
            let next = self.fresh();
            self.show(&next, Shown::Made);
        }
    }

    /// The `storage` event of the record's key in the store's backend, written: another
    /// tab's copy. The same news twice is harmless; a removal (the namespace's sweep of an
    /// expired record) tells nothing to act on.
    pub(super) fn on_storage(&mut self, new: Option<String>) {
        if let Some(text) = new {
            self.take_copy(&text);
        }
    }

    /// Another tab stored `text`: shown here if it is newer than what this page shows, and
    /// not an attempt a page ended (a copy written before, arriving late). Not while this
    /// page holds the scope's Web Lock: only the holder stores, so any copy arriving then
    /// was stored before; nor while it holds its tab's own lock (its record fell back to
    /// its tab's sessionStorage or its memory): another tab's copy is of another record.
    /// What this page sends under a lock is what it shows.
    fn take_copy(&mut self, text: &str) {
        if matches!(self.lock, Lock::Web | Lock::Own) {
            return;
        }
        let Some(r) = self.live(self.decode(text).ok()) else {
            return;
        };
        if r.scope == self.opts.scope && supersedes(&r, &self.rec, self.shown) {
            // Another attempt over a pending or paid one: that one ended (`Scope::replaced`).
            self.replaced |= r.key != self.rec.key && self.rec.state.ends_when_replaced();
            self.show(&r, Shown::Posted);
        }
    }
}
