//! The checks that span pages: once `finish()` or `reset()` returned, the attempt it ended
//! is dead everywhere (no later `open()` shows it, no later submit is answered by it, no
//! try of a later order carries its key, from a restored back/forward-cache page neither);
//! and a submit in a tab the browser neither froze nor slowed settles within its deadline
//! and a second, whatever another tab does.
//!
//! One waiver, which the docs admit ([`Waiver::MarkNotHeard`], within
//! [`crate::waiver::MARK_LAG_MS`] of the call): a tab that has not heard of the `finish()`
//! yet (the mark it leaves in Web Storage has not reached that tab's localStorage, which
//! lags between tabs) may go on with the attempt ended; a key it still showed with nothing
//! sent under it, paid for the next order, is that order's attempt from then on
//! ([`crate::check::Checker::reused`]). A page loaded after the mark sees it. And one more
//! for a submit answered by the attempt ended ([`Waiver::FlagGone`]): its page lists the
//! scope's marks only where the scope's flag is, and could not when it was called (it had
//! listed, read or written none, and a script had removed the flag from its view). No other
//! excuse: not a run whose IndexedDB failed (the mark is in Web Storage), not a mark that
//! Web Storage refused (the page was not told), not an order ended while its submit ran
//! (that submit pays the order it was called for, which the checks here do not hold
//! against it).

use idemkey::core::ended::Mark;
use idemkey::core::record::ended_key;

use crate::check::{GaveUp, Property};
use crate::ends::Listing;
use crate::queue::PageId;
use crate::waiver::Waiver;
use crate::world::World;

/// How long past its deadline a submit may take to settle (its last answer on the way, a
/// store's write).
pub(crate) const WAIT_SLACK_MS: f64 = 1000.0;

impl World {
    /// [`Waiver::MarkNotHeard`] if `page` has not heard yet that `key` was given up at
    /// `at`: the mark is in the origin's localStorage, not yet in the page's copy of it.
    fn not_heard(&self, page: PageId, key: &str, at: f64) -> Option<Waiver> {
        let has = |text: Option<String>| {
            text.is_some_and(|t| t.lines().filter_map(Mark::decode).any(|m| m.key == key))
        };
        let name = self.mark_key(key);
        let e = self.env.borrow();
        let unheard = has(e.local.latest(&name)) && !has(e.local.get(page, &name));
        unheard.then(|| Waiver::MarkNotHeard { lag_ms: e.now - at })
    }

    /// What may let a later use of `key`, given up by `g`, in `page` pass: an end whose
    /// call said it was not durable ([`Waiver::EndNotDurable`]), else a mark not heard yet.
    fn waiver_of(&self, g: &GaveUp, page: PageId, key: &str) -> Option<Waiver> {
        if g.durable {
            self.not_heard(page, key, g.at)
        } else {
            Some(Waiver::EndNotDurable)
        }
    }

    /// What may let a try of `order` leave `page` with `key` given up by `g` for an earlier
    /// order: the page had not heard of the end, or the end said it was not durable. A
    /// submit of this order called before the page had heard of the end counts as called
    /// before it (the docs), though the page has heard by the time it sends; so does Pay
    /// pressed again to resume it after its outcome-unknown.
    fn unheard_at_send(&self, g: &GaveUp, page: PageId, key: &str, order: usize) -> Option<Waiver> {
        let called_unheard = self.pages[page]
            .promises
            .values()
            .filter(|pr| pr.order == order)
            .filter(|pr| {
                !pr.heard
                    .lines()
                    .filter_map(Mark::decode)
                    .any(|m| m.key == key)
            })
            .map(|pr| pr.pressed)
            .next();
        match self.waiver_of(g, page, key) {
            None if g.durable => called_unheard.map(|called| Waiver::MarkNotHeard {
                lag_ms: called - g.at,
            }),
            w => w,
        }
    }

    /// Before the one-key check of a try of `order` leaving `page` with `key`: where the
    /// key was given up for an earlier order and sent before, or shown bound, by a page
    /// that had not heard of the end ([`World::check_send`]), the order's second key is
    /// admitted ([`Waiver::MarkNotHeard`]) for this try too, not only for the keys sent
    /// after it: which of the two keys left first decides nothing.
    pub(crate) fn before_send(&mut self, page: PageId, key: &str, order: usize) {
        let Some(g) = self.check.dead(key, order) else {
            return;
        };
        let unheard = self.unheard_at_send(&g, page, key, order);
        if let Some(Waiver::MarkNotHeard { lag_ms }) = unheard.filter(|w| w.within_bound()) {
            if self.check.sent_before(key, order) || g.bound {
                self.check.on_unheard(order, lag_ms);
            }
        }
    }

    /// A try of `order` leaves `page` with `key`: never a key given up for an earlier
    /// order, unless the page had not heard of it (neither the mark in its localStorage nor
    /// the channel's notice, which writes the mark there): the README holds other tabs to
    /// the mark from when the browser hands it to them. A key with nothing sent under it
    /// is `order`'s attempt from then on.
    pub(crate) fn check_send(&mut self, page: PageId, key: &str, order: usize) {
        let Some(g) = self.check.dead(key, order) else {
            return;
        };
        let unheard = self.unheard_at_send(&g, page, key, order);
        if let Some(Waiver::MarkNotHeard { lag_ms }) = unheard.filter(|w| w.within_bound()) {
            self.check.unheard_sent.insert((page, key.into(), order));
            if self.check.sent_before(key, order) || g.bound {
                self.check.on_unheard(order, lag_ms);
                if g.bound {
                    let from = self.check.sent_from(key, order);
                    if let Some(from) = from {
                        self.check.adopt(key, g.order, from);
                    }
                }
            } else {
                self.check.reused.insert(key.into(), order);
            }
            self.note(|| format!("p{page} had not heard {key} was given up: order {order}'s"));
        }
        let restored = self.pages[page].restored && g.page != page;
        let p = if restored {
            Property::BfcacheGaveUp
        } else {
            g.property()
        };
        let how = if restored { "restored " } else { "" };
        let msg = || {
            format!(
                "{how}p{page} sends {key} for order {order}, given up by {} in p{} at {:.3} (order {})",
                g.call(),
                g.page,
                g.at,
                g.order
            )
        };
        self.check.check(p, false, unheard, msg);
    }

    /// A submit of `order` in `page` is answered by `key`: not an attempt given up before
    /// it was called (`pressed`: or before the call of the submit it resumes, the page's
    /// last, which ended `outcome-unknown`, whose `heard` and `listing` it carries), but
    /// where the mark was not heard ([`Waiver::MarkNotHeard`]) or could not be listed
    /// ([`Waiver::FlagGone`]) at the call. (A later press that
    /// joined it, the same basket while it ran, is answered as it is: the README's second
    /// click joins the request in flight.)
    pub(crate) fn check_answer(
        &mut self,
        page: PageId,
        key: &str,
        order: usize,
        (pressed, heard, listing): (f64, &str, Listing),
    ) {
        let Some(g) = self.check.dead(key, order) else {
            return;
        };
        // A try sent before the page heard of the mark reports what it did.
        let sent_unheard = self.check.unheard_sent.contains(&(page, key.into(), order));
        if sent_unheard {
            return;
        }
        let msg = || {
            format!(
                "p{page}: a submit of order {order} is answered by {key}, given up by {} in p{} at {:.3} (order {})",
                g.call(),
                g.page,
                g.at,
                g.order
            )
        };
        // Called before the page had heard of the end: the docs count it as pressed before.
        let unheard_at_call = !heard.lines().filter_map(Mark::decode).any(|m| m.key == key);
        // Its mark in the page's storage at the call, which the page could not list.
        let unheard = match self.waiver_of(&g, page, key) {
            None if unheard_at_call && g.durable => Some(Waiver::MarkNotHeard {
                lag_ms: pressed - g.at,
            }),
            None if g.durable => Some(Waiver::FlagGone {
                unlisted: listing.unlisted,
                flag_removed: listing.flag_removed,
            }),
            w => w,
        };
        self.check.check(g.property(), false, unheard, msg);
    }

    /// The localStorage key of the mark of `key` given up (one entry per mark).
    pub(crate) fn mark_key(&self, key: &str) -> String {
        ended_key(&self.opts.namespace, &self.opts.scope) + ":" + key
    }

    /// The marks of ended attempts in `page`'s copy of localStorage now, a line each.
    pub(crate) fn heard_marks(&self, page: PageId) -> String {
        let prefix = ended_key(&self.opts.namespace, &self.opts.scope) + ":";
        let e = self.env.borrow();
        e.local
            .keys(page, &prefix)
            .iter()
            .filter_map(|k| e.local.get(page, k))
            .map(|line| line + "\n")
            .collect()
    }

    /// Checks what an `open()` in `page` shows: not an attempt the page finished, nor
    /// one any page gave up before.
    pub(crate) fn opened(&mut self, page: PageId) {
        let p = &self.pages[page];
        let Some(l) = &p.live else { return };
        let key = l.m.record().key.clone();
        let finished =
            |(k, _, order): &(String, f64, usize)| *k == key && !self.check.reborn(k, *order);
        if p.ended.iter().any(finished) {
            let msg = format!("p{page}: open() shows {key}, which this page finished");
            self.check.fail(Property::FinishedStaysFinished, msg);
        }
        self.check_open(page);
    }

    /// An `open()` in `page` shows what it shows: not an attempt given up before it
    /// loaded. (A page that was there when the call came shows what its machine shows at a
    /// second `open()`, as its first `Checkout` does: its own submit's answer, say; what
    /// it sends and answers is checked.)
    pub(crate) fn check_open(&mut self, page: PageId) {
        let Some(l) = &self.pages[page].live else {
            return;
        };
        let key = l.m.record().key.clone();
        let dead = self.check.dead(&key, self.order);
        let Some(g) = dead.filter(|g| page >= g.later_pages) else {
            return;
        };
        let msg = || {
            format!(
                "p{page}: open() shows {key}, given up by {} in p{} at {:.3} (order {})",
                g.call(),
                g.page,
                g.at,
                g.order
            )
        };
        let unheard = self.waiver_of(&g, page, &key);
        self.check.check(g.property(), false, unheard, msg);
    }

    /// Sequence `no` of machine `inst` of `page` is due: settled by now (its deadline and
    /// [`WAIT_SLACK_MS`] after `submit()`), unless its page is gone, or its tab was frozen
    /// meanwhile or has late timers.
    pub(crate) fn due(&mut self, page: PageId, inst: u64, no: u32) {
        let p = &self.pages[page];
        let Some(pr) = p.promises.get(&(inst, no)).filter(|_| p.alive) else {
            return;
        };
        let now = self.now();
        let slowed = self.p.late.is_some_and(|(t, _)| t == p.tab)
            || self.frozen_between(p.tab, pr.called, now);
        if pr.settled.is_some() {
            return;
        }
        let held = self
            .open
            .held_by
            .filter(|p| self.frozen_until(*p).is_some());
        let why = held.map_or(String::new(), |p| {
            format!(" (frozen p{p} holds IndexedDB: its read's answer waits for the thaw)")
        });
        let msg = || {
            format!(
                "p{page}: a submit of order {} called at {:.3} has not settled by {now:.3}{why}",
                pr.order, pr.called
            )
        };
        let waiver = slowed.then_some(Waiver::TabSlowed);
        self.check.check(Property::WaitBounded, false, waiver, msg);
    }
}
