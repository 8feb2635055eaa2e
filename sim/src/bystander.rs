//! Another order's checkout in the same browser profile: a page of the origin, loaded
//! before a `finish()` or `reset()` of this scope, opens its own scope a little after it,
//! and its `open()` sweeps the namespace against its view of localStorage, which has the
//! end's writes only as far as they have reached it (the scope's flag, then the mark: in
//! order, each late). What its sweep deletes is deleted for every page, late.

use std::rc::Rc;

use idemkey::core::machine::Scope;

use crate::env::PageHost;
use crate::ids::PageId;
use crate::queue::Ev;
use crate::world::World;

/// The tab of every bystander page: none the user plays.
const NO_TAB: usize = usize::MAX;

impl World {
    /// Now and then, as a page is about to end an attempt: a bystander page loads now
    /// (its view is the origin's store as it stands) and opens its scope within the
    /// localStorage lag.
    pub(crate) fn bystander(&mut self) {
        if !self.bystanders.chance(0.5) {
            return;
        }
        let page = self.new_page(NO_TAB);
        let t = self.now() + self.bystanders.range(0.0, self.p.lag_ms);
        self.at(t, Ev::Bystander(page));
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
