//! The run's shape, drawn from its seed: how many tabs, which browser faults and how often,
//! which server, and what the user does when (double-clicks, reloads, closing a tab, a
//! second tab, a second `Checkout` in a page, `finish()` or `reset()` while another tab
//! submits, a page killed after some step). Besides, the page's time and its exits: a
//! background tab whose timers fire late, a tab frozen for a while and thawed, a page that
//! exits right after a call returns (reload, navigation, closed tab), a page restored from
//! the back/forward cache, and the same basket paid again after `finish()` or `reset()`.
//! And what else the browser has: Web Storage that throws, a clock stepped back or rounded,
//! two tabs without Web Locks, and a customer who presses Pay in a second tab while the
//! first pays, and moves on with `finish()` (or `reset()`) once the first is answered.

use crate::clock::Clock;
use crate::ids::TabId;
use crate::refusals::StorageFault;
use crate::rng::Rng;

/// A user's move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// A page loads in the tab and opens the checkout (`Checkout.open`).
    Open(TabId),
    /// Pay is pressed in the tab (`submit()` of the current order).
    Submit(TabId),
    /// The tab reloads: its page dies, a new one opens the checkout a little later.
    Reload(TabId),
    /// The page of the tab exits right after a call returned (see [`Exit`]).
    Exit(TabId, Exit),
    /// Back to the page the tab left for another: restored from the back/forward cache
    /// (its machine as it was) if it went there, else loaded anew.
    Back(TabId),
    /// The tab is closed.
    Close(TabId),
    /// A second `Checkout.open` of the scope in the tab's page.
    Second(TabId),
    /// One `Checkout` of the tab's page is freed.
    Free(TabId),
    /// `finish()` in the tab: the order is over, the next one begins.
    Finish(TabId),
    /// `reset()` in the tab: a new attempt on purpose (the order changed).
    Reset(TabId),
    /// Pay pressed again in the tab after its submit ended `outcome-unknown`, as the README
    /// tells the customer: `submit()` of the order that submit paid.
    Again(TabId),
    /// The faults stop, a new tab opens the checkout and submits the current order: it
    /// must settle, and resume whatever is pending.
    Final,
}

/// How a page exits right after one of its calls returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// `location.reload()`: a new page of the tab opens the checkout a little later.
    Reload,
    /// A link or a redirect to another page (the receipt route); the user may come back.
    Navigate,
    /// The tab is closed.
    Close,
}

/// A tab frozen for a while (a background tab on a phone, the debugger's pause): from
/// right after its first page's `after`-th command, for `ms`, its page gets nothing (no
/// answer, no timer, no notice, no event: all wait for the thaw), and keeps what it holds
/// (the scope's lock, an IndexedDB transaction whose answer it has not handled). Its
/// requests in flight go on to the server meanwhile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Freeze {
    /// The tab.
    pub tab: TabId,
    /// After how many commands of its first page.
    pub after: u32,
    /// For how long, ms.
    pub ms: f64,
}

/// A customer with the cart in two tabs: Pay in `payer`, then, while it pays, Pay in
/// `second`; once `payer`'s submit is answered, its receipt route calls `finish()` (or
/// `reset()`); a submit of `second` that ends `outcome-unknown` is pressed again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Receipt {
    /// The tab that pays first.
    pub payer: TabId,
    /// The tab pressed while it pays.
    pub second: TabId,
    /// When Pay is pressed in `payer`, ms.
    pub at: f64,
    /// How long after, Pay in `second`, ms.
    pub after: f64,
    /// `reset()` on the receipt route (else `finish()`).
    pub reset: bool,
}

/// What the browser, the network and the server do in this run.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Tabs the user opens.
    pub tabs: usize,
    /// Web Locks present (else each tab's record is its own: one tab is played).
    pub web_locks: bool,
    /// The longest a localStorage write takes to reach another tab, ms.
    pub lag_ms: f64,
    /// BroadcastChannel: the share of notices lost, and the longest delay.
    pub bc_loss: f64,
    /// See `bc_loss`.
    pub bc_delay: f64,
    /// `storage` events: the share missing, and the longest delay (they may overtake).
    pub ev_loss: f64,
    /// See `ev_loss`.
    pub ev_delay: f64,
    /// IndexedDB: the share of transactions that abort, and that lose the connection
    /// (opened again, the request going through).
    pub idb_abort: f64,
    /// See `idb_abort`.
    pub idb_lost: f64,
    /// Network: requests lost before the server, answers lost after it, slow ones.
    pub lost_before: f64,
    /// See `lost_before`.
    pub lost_after: f64,
    /// See `lost_before`.
    pub slow: f64,
    /// Share of requests that meet a fault before anything is stored.
    pub fault: f64,
    /// Share of charges declined (402).
    pub decline: f64,
    /// The server forgets keys (after the client's `ttlSeconds`).
    pub forget: bool,
    /// A tab whose first page dies after this many commands.
    pub crash: Option<(TabId, u32)>,
    /// A background tab whose timers (backoff, a try's timeout) fire up to this
    /// many ms late.
    pub late: Option<(TabId, f64)>,
    /// A tab frozen for a while, then thawed.
    pub freeze: Option<Freeze>,
    /// The chance that a page exits right after a call of the user returns.
    pub exit: f64,
    /// The chance that a page that navigates away goes into the back/forward cache (when
    /// it may: nothing under way), to be restored later.
    pub bfcache: f64,
    /// Every order is the same basket (the same payload's fingerprint): an order paid
    /// again after `finish()` or `reset()` must not meet the attempt that ended.
    pub same_basket: bool,
    /// The pages' clock: stepped back, rounded, or true.
    pub clock: Clock,
    /// How Web Storage throws, if it does.
    pub refusal: Option<StorageFault>,
    /// The customer who pays in two tabs and moves on once the first is answered.
    pub receipt: Option<Receipt>,
}

/// Picks one of `xs`.
fn pick(rng: &mut Rng, xs: &[f64]) -> f64 {
    xs[rng.below(xs.len())]
}

/// The client's `ttlSeconds` when the server forgets keys (it forgets them as late).
pub const SHORT_TTL_S: f64 = 20.0;
/// When the final tab opens, ms into the run.
pub const FINAL_AT: f64 = 30_000.0;
/// When the run stops whatever still runs, ms (a tab frozen for 40 s, or timers 40 s
/// late, still settle well before).
pub const END_AT: f64 = 150_000.0;

impl Profile {
    /// The profile of a run, from its generator; the page's time and exits from `time`, a
    /// generator of their own (a run without them is the run it was before they came).
    /// What else the browser has comes from `more`, a third generator (a run that draws
    /// none of it is the run it was before).
    pub fn draw(rng: &mut Rng, time: &mut Rng, more: &mut Rng) -> Profile {
        let tabs = 1 + rng.below(3);
        let web_locks = !rng.chance(0.15);
        // Without Web Locks the record is each tab's own and tabs are not coordinated
        // (README): such a run plays one tab, with its reloads, or in half of them two.
        let tabs = if web_locks { tabs } else { 1 };
        let mut p = Profile {
            tabs,
            web_locks,
            lag_ms: pick(rng, &[0.0, 5.0, 20.0, 100.0, 400.0]),
            bc_loss: pick(rng, &[0.0, 0.0, 0.2, 1.0]),
            bc_delay: pick(rng, &[1.0, 20.0, 200.0]),
            ev_loss: pick(rng, &[0.0, 0.3, 1.0]),
            ev_delay: pick(rng, &[1.0, 50.0, 300.0]),
            idb_abort: pick(rng, &[0.0, 0.0, 0.0, 0.05]),
            idb_lost: pick(rng, &[0.0, 0.0, 0.1]),
            lost_before: pick(rng, &[0.0, 0.1, 0.3]),
            lost_after: pick(rng, &[0.0, 0.1, 0.3]),
            slow: pick(rng, &[0.0, 0.1, 0.3]),
            fault: pick(rng, &[0.0, 0.1, 0.3]),
            decline: pick(rng, &[0.0, 0.0, 0.2]),
            forget: rng.chance(0.15),
            crash: rng
                .chance(0.25)
                .then(|| (rng.below(tabs), rng.below(40) as u32)),
            late: None,
            freeze: None,
            exit: 0.0,
            bfcache: 0.0,
            same_basket: false,
            clock: Clock::default(),
            refusal: None,
            receipt: None,
        };
        p.draw_time(time);
        p.draw_more(more);
        p
    }

    /// The default mix of what else the browser has: two tabs in half the runs without
    /// Web Locks; Web Storage that throws in one run in eight (full for a while, or
    /// disabled); a clock stepped back 2 s or 60 s in one in six, rounded to 100 ms in one
    /// in ten; the customer paying in two tabs in one in five of the runs with two tabs.
    fn draw_more(&mut self, more: &mut Rng) {
        if !self.web_locks && more.chance(0.5) {
            self.tabs = 2;
        }
        self.refusal = match more.below(16) {
            0 => Some(StorageFault::Disabled {
                session: more.chance(0.5),
            }),
            1 => {
                let from = more.range(0.0, 4000.0);
                let until = from + pick(more, &[1000.0, 5000.0, END_AT]);
                let session = more.chance(0.3);
                Some(StorageFault::Quota {
                    from,
                    until,
                    session,
                })
            }
            _ => None,
        };
        if more.chance(1.0 / 6.0) {
            let back = pick(more, &[2000.0, 60_000.0]);
            self.clock.step = Some((more.range(200.0, 4000.0), back));
        }
        if more.chance(0.1) {
            self.clock.round_ms = Some(100.0);
        }
        if self.tabs >= 2 && more.chance(0.2) {
            let payer = more.below(self.tabs);
            self.receipt = Some(Receipt {
                payer,
                second: (payer + 1) % self.tabs,
                at: more.range(0.0, 2000.0),
                after: more.range(50.0, 1500.0),
                reset: more.chance(0.3),
            });
        }
    }

    /// The page's time and exits (the default mix): late timers in about one run in
    /// three, a frozen tab in one in four (with Web Locks: without them one tab is played,
    /// and no other waits on it), page exits in two in five, half of them with the
    /// back/forward cache, and the same basket in half the runs.
    fn draw_time(&mut self, time: &mut Rng) {
        let tabs = self.tabs;
        if time.chance(0.3) {
            let max = pick(time, &[2000.0, 15_000.0, 40_000.0]);
            self.late = Some((time.below(tabs), max));
        }
        if time.chance(0.25) && self.web_locks {
            self.freeze = Some(Freeze {
                tab: time.below(tabs),
                after: time.below(30) as u32,
                ms: pick(time, &[2000.0, 8000.0, 20_000.0, 40_000.0]),
            });
        }
        if time.chance(0.4) {
            self.exit = pick(time, &[0.1, 0.3, 0.6]);
            self.bfcache = pick(time, &[0.0, 0.5, 1.0]);
        }
        self.same_basket = time.chance(0.5);
    }

    /// Whether the run plays any of the page's time and exits.
    pub fn timed(&self) -> bool {
        self.late.is_some() || self.freeze.is_some() || self.exit > 0.0
    }
}

/// The user's moves of a run, by time (ms); in a run with the page's time and exits,
/// more of them from `time`: an order finished or reset, then paid again.
pub fn plan(rng: &mut Rng, time: &mut Rng, p: &Profile) -> Vec<(f64, Act)> {
    let mut acts = vec![(0.0, Act::Open(0))];
    for tab in 0..p.tabs {
        let opened = if tab == 0 {
            0.0
        } else {
            rng.range(0.0, 1500.0)
        };
        if tab > 0 {
            acts.push((opened, Act::Open(tab)));
        }
        for _ in 0..1 + rng.below(3) {
            let t = opened + rng.range(0.0, 3000.0);
            acts.push((t, Act::Submit(tab)));
            if rng.chance(0.3) {
                acts.push((t + rng.range(0.0, 200.0), Act::Submit(tab)));
            }
        }
        let moves = [
            (0.3, Act::Reload(tab)),
            (0.08, Act::Close(tab)),
            (0.2, Act::Second(tab)),
            (0.1, Act::Free(tab)),
        ];
        for (chance, act) in moves {
            if rng.chance(chance) {
                acts.push((opened + rng.range(0.0, 4000.0), act));
            }
        }
    }
    if rng.chance(0.1) {
        acts.push((rng.range(0.0, 4000.0), Act::Finish(rng.below(p.tabs))));
    }
    if rng.chance(0.1) {
        acts.push((rng.range(0.0, 4000.0), Act::Reset(rng.below(p.tabs))));
    }
    if p.timed() {
        for reset in [false, true] {
            if time.chance(0.4) {
                let (t, tab) = (time.range(0.0, 4000.0), time.below(p.tabs));
                acts.push((
                    t,
                    if reset {
                        Act::Reset(tab)
                    } else {
                        Act::Finish(tab)
                    },
                ));
                let again = t + time.range(0.0, 2000.0);
                acts.push((again, Act::Submit(time.below(p.tabs))));
            }
        }
    }
    if let Some(r) = p.receipt {
        acts.push((r.at, Act::Submit(r.payer)));
        acts.push((r.at + r.after, Act::Submit(r.second)));
    }
    if let Some((at, _)) = p.clock.step {
        // Paid, the clock steps back, then the attempt ends and the basket is paid again.
        let tab = time.below(p.tabs);
        let end = at + time.range(0.0, 500.0);
        let act = if time.chance(0.5) {
            Act::Finish(tab)
        } else {
            Act::Reset(tab)
        };
        acts.push((end, act));
        acts.push((end + time.range(10.0, 1500.0), Act::Reload(tab)));
        acts.push((end + time.range(1600.0, 3000.0), Act::Submit(tab)));
    }
    if p.clock.round_ms.is_some() {
        // An attempt ends, and Pay is pressed in another tab within the same tick of the
        // rounded clock; then that tab reloads and pays again.
        let (tab, other) = (time.below(p.tabs), time.below(p.tabs));
        let end = time.range(300.0, 4000.0);
        let act = if time.chance(0.5) {
            Act::Finish(tab)
        } else {
            Act::Reset(tab)
        };
        acts.push((end, act));
        acts.push((end + time.range(0.0, 100.0), Act::Submit(other)));
        acts.push((end + time.range(150.0, 1500.0), Act::Reload(other)));
        acts.push((end + time.range(1600.0, 3000.0), Act::Submit(other)));
    }
    acts.push((FINAL_AT, Act::Final));
    acts
}
