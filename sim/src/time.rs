//! The page's time and its exits, as the browser plays them: a background tab's timers
//! fired late; a tab frozen and thawed (everything due to its page waits for the thaw, and
//! it keeps its lock and any IndexedDB transaction whose answer it has not handled); a page
//! that exits right after a call returned (its machine gone, its Web Lock and lock requests
//! freed by the browser, its IndexedDB transactions not yet run aborted, its Web Storage
//! writes kept, as they were made synchronously); and the back/forward cache, which keeps a
//! page that left with nothing under way, its machine in memory, and restores it later
//! without the notices and `storage` events it missed.

use crate::queue::{Ev, PageId, TabId};
use crate::user::{Act, Exit};
use crate::world::World;

impl World {
    /// Until when `page` is frozen, if it is now.
    pub(crate) fn frozen_until(&self, page: PageId) -> Option<f64> {
        let (p, from, until) = self.frozen?;
        let now = self.now();
        (p == page && from <= now && now < until).then_some(until)
    }

    /// Whether `tab`'s page was frozen at some moment of `[from, to]`.
    pub(crate) fn frozen_between(&self, tab: TabId, from: f64, to: f64) -> bool {
        self.frozen
            .is_some_and(|(p, f, u)| self.pages[p].tab == tab && f <= to && from < u)
    }

    /// Counts a command of `page` towards the run's freeze: the tab freezes right after its
    /// first page's `after`-th command (the rest of that task still runs).
    pub(crate) fn count_towards_freeze(&mut self, page: PageId) {
        let Some(f) = self.p.freeze else { return };
        if self.frozen.is_some() || self.pages[page].tab != f.tab {
            return;
        }
        let n = &mut self.pages[page].commands;
        *n += 1;
        if *n > f.after {
            let now = self.now();
            // On the queue's grid of µs, so the thaw's events find the page thawed.
            let until = ((now + f.ms) * 1000.0).ceil() / 1000.0;
            self.frozen = Some((page, now, until));
            self.note(|| format!("p{page} freezes until {until:.3}"));
        }
    }

    /// How late a timer of `page` fires: up to the run's lateness in its background tab,
    /// until the final submit (the tab is in the foreground then, its timers on time).
    pub(crate) fn lateness(&mut self, page: PageId) -> f64 {
        match self.p.late {
            Some((tab, max)) if self.pages[page].tab == tab && !self.faults_off => {
                self.time.range(0.0, max)
            }
            _ => 0.0,
        }
    }

    /// After a call of the user in `tab` returned: its page exits at once, a moment later
    /// (its microtasks and a few ms of its tasks run first), or not at all.
    pub(crate) fn maybe_exit(&mut self, tab: TabId) {
        if self.faults_off || !self.time.chance(self.p.exit) {
            return;
        }
        let how = match self.time.below(5) {
            0 | 1 => Exit::Navigate,
            2 | 3 => Exit::Reload,
            _ => Exit::Close,
        };
        if self.time.chance(0.5) {
            self.exit(tab, how);
        } else {
            let t = self.now() + self.time.range(0.0, 100.0);
            self.at(t, Ev::User(Act::Exit(tab, how)));
        }
    }

    /// The page of `tab` exits `how`; a reload or a navigation brings a page back later (a
    /// new one, or this one from the back/forward cache), where the user may pay again.
    pub(crate) fn exit(&mut self, tab: TabId, how: Exit) {
        let Some(&page) = self.tab_page.get(&tab) else {
            return;
        };
        if !self.pages[page].alive {
            return;
        }
        self.note(|| format!("p{page} exits: {how:?}"));
        let cached = how == Exit::Navigate && self.idle(page) && self.time.chance(self.p.bfcache);
        if cached {
            self.pages[page].alive = false;
            self.away.insert(tab, page);
            self.note(|| format!("p{page} goes into the back/forward cache"));
        } else {
            self.abort_txns(page);
            self.kill(page);
        }
        let back = self.now() + self.time.range(5.0, 3000.0);
        match how {
            Exit::Close => return,
            Exit::Reload => self.at(back, Ev::User(Act::Open(tab))),
            Exit::Navigate => self.at(back, Ev::User(Act::Back(tab))),
        }
        if self.time.chance(0.7) {
            let t = back + self.time.range(10.0, 800.0);
            self.at(t, Ev::User(Act::Submit(tab)));
        }
    }

    /// Back to `tab`'s page that navigated away: the one in the back/forward cache, its
    /// machine as it left it, or else a new page.
    pub(crate) fn back(&mut self, tab: TabId) {
        let Some(page) = self.away.remove(&tab) else {
            return self.user(Act::Open(tab));
        };
        if let Some(&now) = self.tab_page.get(&tab) {
            if now != page && self.pages[now].alive {
                self.abort_txns(now);
                self.kill(now);
            }
        }
        let p = &mut self.pages[page];
        p.alive = true;
        p.restored = true;
        self.tab_page.insert(tab, page);
        self.note(|| format!("p{page} is restored from the back/forward cache"));
    }

    /// Whether `page` may go into the back/forward cache: nothing under way (no lock held
    /// or asked for, no try in flight, no submit unsettled), as a browser keeps only such.
    fn idle(&self, page: PageId) -> bool {
        let p = &self.pages[page];
        let machine = p.live.as_ref().map_or(true, |l| !l.m.busy());
        let waits = self.locks.waiters().iter().any(|(pg, _)| *pg == page);
        let holds = self.locks.holders().iter().any(|(_, (pg, _))| *pg == page);
        let sends = self.reqs.values().any(|r| r.from(page));
        let unsettled = p.promises.values().any(|pr| pr.settled.is_none());
        machine && !waits && !holds && !sends && !unsettled
    }
}
