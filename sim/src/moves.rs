//! The user's moves in a run: opening the checkout in a tab, Pay (double-clicks too),
//! reloads, closing a tab, a second `Checkout` in a page and freeing one, `finish()` and
//! `reset()`, Pay pressed again after `outcome-unknown`, the receipt route of a customer
//! paying in two tabs, and the final tab that must resume whatever is pending.

use std::rc::Rc;

use idemkey::core::fingerprint::fingerprint;
use idemkey::core::machine::Submitted;

use crate::check::{GaveUp, Property};
use crate::ends::Listing;
use crate::page::{Promise, UnknownPay};
use crate::queue::{Ev, PageId, TabId};
use crate::spans::WAIT_SLACK_MS;
use crate::user::{Act, Exit};
use crate::waiver::Waiver;
use crate::world::{env_now, World};

impl World {
    /// Order `order`'s payload and its fingerprint; in a run of one basket, the basket's
    /// (the order's number only tells the checks which order a try pays).
    fn payload(&self, order: usize) -> (String, String) {
        let body = format!("{{\"order\":{order},\"amount\":4200}}");
        let basket = if self.p.same_basket {
            "{\"amount\":4200}"
        } else {
            &body
        };
        let fp = fingerprint(basket).expect("the payload is JSON");
        (body, fp)
    }

    /// The page shown in `tab`, if alive, with a machine `Checkout`s use.
    fn in_use(&self, tab: TabId) -> Option<PageId> {
        let id = *self.tab_page.get(&tab)?;
        let p = &self.pages[id];
        (p.alive && p.live.as_ref().is_some_and(|l| l.checkouts > 0)).then_some(id)
    }

    pub(crate) fn user(&mut self, a: Act) {
        if let Some(until) = self.waits_for_thaw(a) {
            return self.at(until, Ev::User(a));
        }
        self.note(|| format!("user {a:?}"));
        self.act(a);
        let called = match a {
            Act::Open(t) | Act::Submit(t) | Act::Second(t) | Act::Free(t) | Act::Again(t) => {
                Some(t)
            }
            Act::Finish(t) | Act::Reset(t) => Some(t),
            _ => None,
        };
        if let Some(tab) = called.filter(|t| self.in_use(*t).is_some()) {
            self.maybe_exit(tab);
        }
    }

    /// Until when a move must wait: the user cannot use a frozen tab (only close it).
    fn waits_for_thaw(&self, a: Act) -> Option<f64> {
        let tab = match a {
            Act::Close(_) | Act::Exit(_, Exit::Close) | Act::Final => return None,
            Act::Open(t) | Act::Submit(t) | Act::Reload(t) | Act::Second(t) | Act::Again(t) => t,
            Act::Free(t) | Act::Finish(t) | Act::Reset(t) | Act::Exit(t, _) | Act::Back(t) => t,
        };
        self.frozen_until(*self.tab_page.get(&tab)?)
    }

    /// What the user does.
    fn act(&mut self, a: Act) {
        match a {
            Act::Open(tab) => {
                if self
                    .tab_page
                    .get(&tab)
                    .is_some_and(|p| self.pages[*p].alive)
                {
                    return self.second(tab);
                }
                self.load(tab);
            }
            Act::Exit(tab, how) => self.exit(tab, how),
            Act::Back(tab) => self.back(tab),
            Act::Submit(tab) => {
                if let Some(page) = self.in_use(tab) {
                    // The same basket pressed again after this page's last submit ended
                    // outcome-unknown, or while it has not settled (another tab's end
                    // stopped it), goes on with that submit's order, as the docs say, even
                    // where another tab ended it meanwhile.
                    let unknown = self.pages[page]
                        .unknown
                        .as_ref()
                        .map(|u| u.order)
                        .or_else(|| self.unsettled_order(page))
                        .filter(|_| self.p.same_basket);
                    self.submit(page, unknown.unwrap_or(self.order));
                }
            }
            Act::Again(tab) => {
                if let Some(page) = self.in_use(tab) {
                    // As a press of Pay above, whatever the basket: the customer presses for
                    // the order the page is paying.
                    let order = self.pages[page]
                        .unknown
                        .as_ref()
                        .map(|u| u.order)
                        .or_else(|| self.unsettled_order(page));
                    self.submit(page, order.unwrap_or(self.order));
                }
            }
            Act::Reload(tab) | Act::Close(tab) => {
                let Some(&page) = self.tab_page.get(&tab) else {
                    return;
                };
                self.kill(page);
                if a == Act::Reload(tab) {
                    let t = self.now() + self.rng(|r| r.range(5.0, 300.0));
                    self.at(t, Ev::User(Act::Open(tab)));
                    if self.rng(|r| r.chance(0.6)) {
                        let t2 = t + self.rng(|r| r.range(10.0, 800.0));
                        self.at(t2, Ev::User(Act::Submit(tab)));
                    }
                }
            }
            Act::Second(tab) => self.second(tab),
            Act::Free(tab) => {
                if let Some(page) = self.in_use(tab) {
                    if let Some(l) = self.pages[page].live.as_mut() {
                        l.checkouts -= 1;
                    }
                    self.drain(page);
                }
            }
            Act::Finish(tab) | Act::Reset(tab) => {
                let Some(page) = self.in_use(tab) else { return };
                self.bystander();
                let ended = self.order;
                self.order += 1;
                let now = self.now();
                let p = &mut self.pages[page];
                let l = p.live.as_mut().expect("in use");
                let key = l.m.record().key.clone();
                let bound = l.m.record().fingerprint.is_some();
                p.ended.push((key.clone(), now, ended));
                // The page moved on itself: its next Pay is the next order's, whatever its
                // last submit ended with.
                p.unknown = None;
                let reset = matches!(a, Act::Reset(_));
                let durable = if reset { l.m.reset() } else { l.m.finish() };
                self.check.on_give_up(GaveUp {
                    key,
                    order: ended,
                    at: now,
                    page,
                    reset,
                    later_pages: self.pages.len(),
                    durable,
                    bound,
                });
                self.drain(page);
            }
            Act::Final => {
                self.faults_off = true;
                // A new tab; without Web Locks, a reload of the one tab played (another tab
                // has a record of its own there).
                let tab = if self.p.web_locks { self.p.tabs } else { 0 };
                let page = self.load(tab);
                if let Some((inst, no)) = self.submit(page, self.order) {
                    self.final_promise = Some((page, inst, no));
                }
            }
        }
    }

    /// A second `Checkout.open` in the tab's page: the registry's machine opened again
    /// (or a new one where the page let it go); the first `Checkout` sees no change.
    fn second(&mut self, tab: TabId) {
        let Some(&page) = self.tab_page.get(&tab) else {
            return;
        };
        if !self.pages[page].alive {
            return;
        }
        let Some(l) = self.pages[page].live.as_mut() else {
            return self.open_scope(page, false);
        };
        let now = env_now(&self.env);
        let r = l.m.record();
        let before = (r.key.clone(), r.state, r.attempts);
        let expired = r.is_expired(now);
        let past_ms = now - r.expires_at;
        l.checkouts += 1;
        l.m.reopen();
        let r = l.m.record();
        let after = (r.key.clone(), r.state, r.attempts);
        let waiver = expired.then_some(Waiver::KeyExpired { past_ms });
        let msg = || format!("p{page}: a second Checkout changed {before:?} to {after:?}");
        self.check
            .check(Property::OneViewPerPage, before == after, waiver, msg);
        self.opened(page);
        self.drain(page);
    }

    /// `submit()` of `order` in `page`; the sequence's promise if new.
    fn submit(&mut self, page: PageId, order: usize) -> Option<(u64, u32)> {
        let (body, fp) = self.payload(order);
        let send = Rc::new(self.opts.clone());
        // What the page could list of the scope's marks as it is called, before the call
        // reads any; the call reads the mark of the key the page shows by its own entry, so
        // that mark in its view of localStorage is heard whatever the flag.
        let mut listed = self.listing(page);
        let shown = self.pages[page].live.as_ref()?.m.record().key.clone();
        let e = self.env.borrow();
        listed.unlisted &= e.local.get(page, &self.mark_key(&shown)).is_none();
        drop(e);
        let l = self.pages[page].live.as_mut()?;
        let inst = l.inst;
        let got = l.m.submit(body, fp, send);
        self.note(|| format!("p{page} submit order {order} -> {got:?}"));
        let now = self.now();
        let out = match got {
            Submitted::Started(no) => {
                // Pay pressed again for the order whose last submit here ended
                // outcome-unknown resumes that submit's attempt: it was pressed when that
                // one was, and heard what that one had.
                let p = &self.pages[page];
                let resumed = (p.unknown.as_ref())
                    .filter(|u| u.order == order)
                    .map(|u| (u.pressed, u.heard.clone(), u.listing));
                let (pressed, heard, listing) =
                    resumed.unwrap_or_else(|| (now, self.heard_marks(page), listed));
                let pr = Promise {
                    order,
                    called: now,
                    pressed,
                    heard,
                    listing,
                    settled: None,
                    sent: None,
                };
                self.pages[page].promises.insert((inst, no), pr);
                let due = now + self.opts.deadline_ms as f64 + WAIT_SLACK_MS;
                self.at(due, Ev::Due { page, inst, no });
                Some((inst, no))
            }
            Submitted::Joined(no) => Some((inst, no)),
            Submitted::Refused(_) => None,
        };
        self.drain(page);
        out
    }

    /// The order of `page`'s submit that has not settled, unless the page ended that
    /// order itself since (its next Pay is the next order's).
    fn unsettled_order(&self, page: PageId) -> Option<usize> {
        let p = &self.pages[page];
        let order = p
            .promises
            .values()
            .filter(|pr| pr.settled.is_none())
            .max_by(|a, b| a.called.total_cmp(&b.called))?
            .order;
        (!p.ended.iter().any(|(_, _, o)| *o >= order)).then_some(order)
    }

    /// A submit of `order` in `page` settled (`answered`: with a 2xx answer; `unknown`:
    /// `outcome-unknown`, with the submit's `pressed` and `heard`): the customer of the
    /// run's two-tab payment moves on in the payer's tab (its receipt route calls `finish()`
    /// or `reset()`) once it is answered, and presses Pay again in the other after an
    /// `outcome-unknown`.
    pub(crate) fn customer_sees(
        &mut self,
        page: PageId,
        order: usize,
        answered: bool,
        unknown: Option<(f64, String, Listing)>,
    ) {
        let tab = self.pages[page].tab;
        // A page that ended that order itself since has moved on: its next Pay is the next
        // order's. Such a submit, stopped by that end and settling late, is not the page's
        // last one either (the machine goes on from the one called after the end): what
        // that one left stands.
        let moved_on = self.pages[page].ended.iter().any(|(_, _, o)| *o >= order);
        if !moved_on {
            let unknown = unknown.clone();
            self.pages[page].unknown = unknown.map(|(pressed, heard, listing)| UnknownPay {
                order,
                pressed,
                heard,
                listing,
            });
        }
        let Some(r) = self.p.receipt.filter(|_| !self.faults_off) else {
            return;
        };
        if answered && tab == r.payer && !self.moved_on {
            self.moved_on = true;
            let act = if r.reset {
                Act::Reset(tab)
            } else {
                Act::Finish(tab)
            };
            let t = self.now() + self.time.range(0.0, 200.0);
            self.at(t, Ev::User(act));
        }
        if unknown.is_some() && tab == r.second {
            let t = self.now() + self.time.range(200.0, 3000.0);
            self.at(t, Ev::User(Act::Again(tab)));
        }
    }
}
