//! The user's moves in a run: opening the checkout in a tab, Pay (double-clicks too),
//! reloads, closing a tab, a second `Checkout` in a page and freeing one, `finish()` and
//! `reset()`, and the final tab that must resume whatever is pending.

use std::rc::Rc;

use idemkey::core::fingerprint::fingerprint;
use idemkey::core::machine::Submitted;

use crate::check::Property;
use crate::queue::{Ev, PageId, TabId};
use crate::user::Act;
use crate::world::{env_now, Promise, World};

impl World {
    /// The current order's payload and its fingerprint.
    fn payload(&self) -> (String, String) {
        let body = format!("{{\"order\":{},\"amount\":4200}}", self.order);
        let fp = fingerprint(&body).expect("the payload is JSON");
        (body, fp)
    }

    /// The page shown in `tab`, if alive, with a machine `Checkout`s use.
    fn in_use(&self, tab: TabId) -> Option<PageId> {
        let id = *self.tab_page.get(&tab)?;
        let p = &self.pages[id];
        (p.alive && p.live.as_ref().is_some_and(|l| l.checkouts > 0)).then_some(id)
    }

    pub(crate) fn user(&mut self, a: Act) {
        self.note(|| format!("user {a:?}"));
        match a {
            Act::Open(tab) => {
                if self
                    .tab_page
                    .get(&tab)
                    .is_some_and(|p| self.pages[*p].alive)
                {
                    return self.user(Act::Second(tab));
                }
                self.load(tab);
            }
            Act::Submit(tab) => {
                if let Some(page) = self.in_use(tab) {
                    self.submit(page);
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
                let running = self.pages.iter().any(|p| {
                    p.alive
                        && p.promises
                            .values()
                            .any(|pr| pr.order == self.order && pr.settled.is_none())
                });
                let ended = self.order;
                self.check.on_end(ended, running);
                self.order += 1;
                let now = self.now();
                let p = &mut self.pages[page];
                let l = p.live.as_mut().expect("in use");
                p.ended.push((l.m.record().key.clone(), now, ended));
                if matches!(a, Act::Finish(_)) {
                    l.m.finish();
                } else {
                    l.m.reset();
                }
                self.drain(page);
            }
            Act::Final => {
                self.faults_off = true;
                // A new tab; without Web Locks, a reload of the one tab played (another tab
                // has a record of its own there).
                let tab = if self.p.web_locks { self.p.tabs } else { 0 };
                let page = self.load(tab);
                if let Some((inst, no)) = self.submit(page) {
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
        l.checkouts += 1;
        l.m.reopen();
        let r = l.m.record();
        let after = (r.key.clone(), r.state, r.attempts);
        if !expired && before != after {
            let msg = format!("p{page}: a second Checkout changed {before:?} to {after:?}");
            self.check.fail(Property::OneViewPerPage, msg);
        }
        self.opened(page);
        self.drain(page);
    }

    /// `submit()` of the current order in `page`; the sequence's promise if new.
    fn submit(&mut self, page: PageId) -> Option<(u64, u32)> {
        let (body, fp) = self.payload();
        let send = Rc::new(self.opts.clone());
        let l = self.pages[page].live.as_mut()?;
        let inst = l.inst;
        let got = l.m.submit(body, fp, send);
        let order = self.order;
        self.note(|| format!("p{page} submit order {order} -> {got:?}"));
        let now = self.now();
        let out = match got {
            Submitted::Started(no) => {
                let pr = Promise {
                    order,
                    called: now,
                    settled: None,
                };
                self.pages[page].promises.insert((inst, no), pr);
                Some((inst, no))
            }
            Submitted::Joined(no) => Some((inst, no)),
            Submitted::Refused(_) => None,
        };
        self.drain(page);
        out
    }
}
