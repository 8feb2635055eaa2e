//! Another order's checkout in the same browser profile: a page of the origin, loaded
//! before a `finish()` or `reset()` of this scope, opens its own scope a little after it,
//! and its `open()` sweeps the namespace against its view of localStorage, which has the
//! end's writes only as far as they have reached it (the scope's flag, then the mark: in
//! order, each late). What its sweep deletes is deleted for every page, late. And a script
//! on the shop's page (another page of the origin) removes the scope's flag
//! (`<ns>:ends:<scope>`) a while after an end, which every other page sees late.

use std::rc::Rc;

use idemkey::core::machine::Scope;
use idemkey::core::record::ends_key;

use crate::env::PageHost;
use crate::ids::PageId;
use crate::queue::Ev;
use crate::world::World;

/// The tab of every bystander page: none the user plays.
const NO_TAB: usize = usize::MAX;

/// How long after an end a script may remove the scope's flag, ms.
const FLAG_REMOVED_WITHIN_MS: f64 = 4000.0;

impl World {
    /// Now and then, as a page is about to end an attempt: a bystander page loads now
    /// (its view is the origin's store as it stands) and opens its scope within the
    /// localStorage lag.
    /// Now and then too, a script removes the scope's flag within the next 4 s.
    pub(crate) fn bystander(&mut self) {
        if self.bystanders.chance(0.5) {
            let t = self.now() + self.bystanders.range(0.0, FLAG_REMOVED_WITHIN_MS);
            self.at(t, Ev::FlagRemoved);
        }
        if !self.bystanders.chance(0.5) {
            return;
        }
        let page = self.new_page(NO_TAB);
        let t = self.now() + self.bystanders.range(0.0, self.p.lag_ms);
        self.at(t, Ev::Bystander(page));
    }

    /// A script in a page of the origin that loads now removes the scope's flag (its view is
    /// the origin's store as it stands; the other pages see the removal late), and leaves.
    pub(crate) fn flag_removed(&mut self) {
        let page = self.new_page(NO_TAB);
        let flag = ends_key(&self.opts.namespace, &self.opts.scope);
        self.note(|| format!("p{page} (a script) removes {flag}"));
        let now = self.now();
        {
            let mut e = self.env.borrow_mut();
            let e = &mut *e;
            let rng = &mut self.bystanders;
            let present = e.local.latest(&flag).is_some();
            e.ends.script_removes(present);
            e.local.write(page, &flag, None, now, rng, &mut e.q);
            e.local.unload(page);
        }
        self.pages[page].alive = false;
    }

    /// Bystander `page` opens another scope of the namespace, sweeping it, and leaves.
    pub(crate) fn bystander_opens(&mut self, page: PageId) {
        let host = PageHost {
            page,
            tab: NO_TAB,
            env: self.env.clone(),
        };
        let mut opts = self.opts.clone();
        opts.scope.push_str("-another-order");
        // Its draws (its key, its writes' lags) from its own stream.
        std::mem::swap(&mut self.env.borrow_mut().rng, &mut self.bystanders);
        drop(Scope::open(host, Rc::new(opts), true));
        std::mem::swap(&mut self.env.borrow_mut().rng, &mut self.bystanders);
        self.pages[page].alive = false;
        self.env.borrow_mut().local.unload(page);
    }
}
