//! The properties checked during and after every run, taken from the README's promises.
//!
//! A *checkout attempt* here is one order of the simulated user: order 0 begins with the
//! run; the user's `finish()` or `reset()` (in any tab) ends the current order and begins
//! the next. Every `submit()` carries the number of the order current when it is called in
//! its body (a customer who presses Pay again after an `outcome-unknown`, the order of that
//! submit), so each request belongs to exactly one order; a charge belongs to the first
//! order its key was sent for ([`Checker::on_charge`]). A submit called before the order
//! ended belongs to it, whenever it runs: one key, one charge.
//!
//! A violation passes only through a [`Waiver`], a limit the docs admit to a user, within
//! its bound; each one met is counted ([`Checker::waived`]). An attempt given up by
//! `finish()` or `reset()` is dead everywhere once the call returned (the README's durable
//! promise; `spans.rs` checks it across pages), but for a tab that had not heard of the
//! call yet ([`Waiver::MarkNotHeard`]): one that still showed the key with nothing sent
//! under it may pay a later order under it; the key is that order's attempt from then on
//! ([`Checker::reused`]).

use std::collections::BTreeMap;

use idemkey::core::machine::{Event, EventKind};

pub use crate::property::Property;
use crate::waiver::{Waiver, NAMES};

mod excuse;
mod from;

pub use from::From;

/// An attempt a page gave up with `finish()` or `reset()`: dead everywhere once the call
/// returned.
#[derive(Debug, Clone)]
pub struct GaveUp {
    /// The key the page showed.
    pub key: String,
    /// The order it ended.
    pub order: usize,
    /// When (the call returns at once).
    pub at: f64,
    /// The page.
    pub page: usize,
    /// `reset()` (else `finish()`).
    pub reset: bool,
    /// How many pages had loaded then: the later pages are numbered from here.
    pub later_pages: usize,
    /// What the call returned: `false` when Web Storage refused the mark.
    pub durable: bool,
    /// The page showed the key bound to a payload (its mark ends every record of the key,
    /// core::ended's `Mark::covers`), sent under or not.
    pub bound: bool,
}

impl GaveUp {
    /// The property a later use of its key breaks.
    pub fn property(&self) -> Property {
        if self.reset {
            Property::ResetDurable
        } else {
            Property::FinishDurable
        }
    }

    /// What was called.
    pub fn call(&self) -> &'static str {
        if self.reset {
            "reset()"
        } else {
            "finish()"
        }
    }
}

/// What is known of one order.
#[derive(Default)]
struct Order {
    /// The keys its payload went out under, in order, each with where it was first sent.
    keys: Vec<(String, From)>,
    /// Keys a submit of it settled `outcome-unknown` (not abandoned) with.
    unknown: Vec<String>,
    /// Keys it was charged under.
    charged: Vec<String>,
    /// A tab that had not heard its key was given up sent it for this order that long
    /// after the call (ms): the order may go out under another key too, once it hears.
    unheard: Option<f64>,
    /// `(key, other)`: the page that first sent `key` had shown `other` bound to a payload
    /// before it showed `key` so; the docs hold such a page to `other`.
    saw: Vec<(String, String)>,
    /// The pairs of `saw`, and those the clocks order (a page's own uncounted copies).
    held: Vec<(String, String)>,
}

/// The run's checker: the first violation found.
#[derive(Default)]
pub struct Checker {
    orders: BTreeMap<usize, Order>,
    /// When each key sent expires at the client (ms since the epoch, the page's clock).
    expiry: BTreeMap<String, f64>,
    /// The pages have Web Locks (else each tab's record and key are its own).
    pub web_locks: bool,
    /// How often each waiver let a violation pass, by [`Waiver::index`].
    pub waived: [u64; NAMES.len()],
    /// The attempts given up, in the order of the calls.
    pub gave_up: Vec<GaveUp>,
    /// Keys given up that a later order was paid under by a tab that had not heard of it
    /// (the mark had not reached its Web Storage yet): that order's attempt from then on.
    pub reused: BTreeMap<String, usize>,
    /// Tries a page sent, for an order, under a key it had not heard was given up: their
    /// answer is what that try did (a try on the wire still reports it).
    pub unheard_sent: std::collections::BTreeSet<(usize, String, usize)>,
    /// Only this property counts (to show a mutation breaks that one).
    pub focus: Option<Property>,
    /// The first violation.
    pub violation: Option<(Property, String)>,
    /// Keys whose record lived in localStorage alone and another tab's write of another
    /// attempt replaced there, as the world saw it ([`Waiver::Replaced`]), with when.
    pub replaced: BTreeMap<String, f64>,
    /// Keys whose record lived in localStorage alone and a page's sweep, its view of
    /// localStorage late, removed there, as the world saw it ([`Waiver::Swept`]), with when.
    pub swept: BTreeMap<String, f64>,
}

impl Checker {
    /// A checker for which only `focus` counts, if given.
    pub fn focused(focus: Option<Property>, web_locks: bool) -> Checker {
        Checker {
            focus,
            web_locks,
            ..Checker::default()
        }
    }

    /// Records a violation (the first one is kept).
    pub fn fail(&mut self, p: Property, msg: String) {
        if self.violation.is_none() && self.focus.map_or(true, |f| f == p) {
            self.violation = Some((p, msg));
        }
    }

    /// Checks that `p` `holds`; else lets it pass through `w` if `w` waives `p` within its
    /// bound (counted), or records the violation `msg`.
    pub fn check(
        &mut self,
        p: Property,
        holds: bool,
        w: Option<Waiver>,
        msg: impl FnOnce() -> String,
    ) {
        match (holds, w) {
            (true, _) => {}
            (false, Some(w)) if w.waives(p) && w.within_bound() => self.waived[w.index()] += 1,
            (false, Some(w)) if w.waives(p) => {
                let m = format!("{} ({} out of its bound: {w:?})", msg(), w.name());
                self.fail(p, m);
            }
            (false, _) => self.fail(p, msg()),
        }
    }

    /// A try of `order` goes out of `tab` under `key` (`expires`: the record's expiry, and
    /// `clock`: the page's clock, both ms since the epoch); `failed(k)`: the server answered
    /// key `k` with a final failure; `seen(k)`: the sending page showed key `k` bound to a
    /// payload before it showed `key` so. The key before is the order's last one, or without Web
    /// Locks this tab's last one (another tab's is its own: [`Waiver::OwnTab`]).
    pub fn on_send(
        &mut self,
        order: usize,
        key: &str,
        from: From,
        (expires, clock): (f64, f64),
        failed: impl Fn(&str) -> bool,
        seen: impl Fn(&str) -> bool,
    ) {
        self.expiry.entry(key.into()).or_insert(expires);
        let mut from = from;
        from.own |= self.kept_by_tab(key, from.tab);
        let o = self.orders.entry(order).or_default();
        if o.keys.iter().any(|(k, _)| k == key) {
            return;
        }
        let tab = from.tab;
        let mine = o.keys.iter().rev().find(|(_, f)| f.tab == tab).cloned();
        let last = o.keys.last().cloned();
        // A tab that sent a key of this order from localStorage alone (IndexedDB failed)
        // goes on from its own copy, which carries no count: the clocks order it against
        // the key it saw, as the docs admit.
        let own_uncounted =
            from.unordered && o.keys.iter().any(|(_, f)| f.tab == from.tab && f.unordered);
        let saw = o.keys.iter().map(|(k, _)| k).filter(|k| seen(k));
        let saw: Vec<(String, String)> = saw.map(|k| (key.to_string(), k.clone())).collect();
        if !own_uncounted {
            o.saw.extend(saw.iter().cloned());
        }
        o.held.extend(saw);
        o.keys.push((key.into(), from));
        let unheard = o.unheard;
        let (prev, before) = match (mine, last) {
            (Some(m), _) if !self.web_locks => m,
            (_, Some(l)) => l,
            (_, None) => return,
        };
        let not_durable = |k: &str| self.gave_up.iter().any(|g| g.key == k && !g.durable);
        let waiver = if failed(&prev) {
            Some(Waiver::FinalFailure)
        } else if not_durable(&prev) || not_durable(key) {
            // One of the two keys was given up by a call that said its end was not durable:
            // another tab or a later page may take it for the live attempt.
            Some(Waiver::EndNotDurable)
        } else {
            let waiver = self.between(order, (&prev, key), before, from, clock);
            self.or_unheard(waiver, unheard)
        };
        // `prev` given up for an earlier order and sent for this one by a page that had not
        // heard of the end: the docs count that Pay as pressed before the end, so the
        // outcome it left unknown is the ended attempt's, which that page resumes; another
        // page goes on with this order under a key of its own (the end is durable for it).
        // Only the key's second use is left to check then, which the mark-not-heard
        // waiver admits.
        let unheard_by = |p: usize| self.unheard_sent.contains(&(p, prev.clone(), order));
        let ended_unknown = !unheard_by(from.page)
            && self
                .unheard_sent
                .iter()
                .any(|(_, k, o)| *k == prev && *o == order);
        let (p, what) = if self.orders[&order].unknown.contains(&prev) && !ended_unknown {
            (Property::UnknownKept, "whose outcome is unknown")
        } else {
            (Property::OnePayloadOneKey, "in use")
        };
        let msg = || format!("order {order} sent under {key} from tab {tab} after {prev} ({what})");
        self.check(p, false, waiver, msg);
    }

    /// Whether `key`, given up when `ended` ended, was paid for a later order by a tab that
    /// had not heard of it: it is that order's attempt, no longer the one ended.
    pub fn reborn(&self, key: &str, ended: usize) -> bool {
        self.reused.get(key).is_some_and(|o| *o > ended)
    }

    /// A page gave an attempt up (`finish()` or `reset()` returned).
    pub fn on_give_up(&mut self, g: GaveUp) {
        self.gave_up.push(g);
    }

    /// The give-up that `key` belongs to for a submit of `order` called after it: the
    /// latest one of that key for an earlier order, unless a tab that had not heard of it
    /// paid `order` under that key ([`Checker::reused`]).
    pub fn dead(&self, key: &str, order: usize) -> Option<GaveUp> {
        let mut all = self.gave_up.iter().rev();
        let g = all.find(|g| g.key == key && g.order < order)?;
        (!self.reborn(key, g.order)).then(|| g.clone())
    }

    /// `key`, given up for `ended` where its page showed it bound, went out from `from` for
    /// a later order from a page that had not heard of the end: the docs count that Pay as
    /// pressed before the end, so its try is the ended attempt's, and a charge under it is
    /// that order's ([`Checker::on_charge`] takes the first order a key is listed for).
    pub fn adopt(&mut self, key: &str, ended: usize, from: From) {
        let o = self.orders.entry(ended).or_default();
        if !o.keys.iter().any(|(k, _)| k == key) {
            o.keys.push((key.into(), from));
        }
    }

    /// Where `key` first went out from for `order`, if it did.
    pub fn sent_from(&self, key: &str, order: usize) -> Option<From> {
        let keys = &self.orders.get(&order)?.keys;
        keys.iter().find(|(k, _)| k == key).map(|(_, f)| *f)
    }

    /// Whether `key` went out for an order other than `order` before.
    pub fn sent_before(&self, key: &str, order: usize) -> bool {
        let other =
            |(o, ord): (&usize, &Order)| *o != order && ord.keys.iter().any(|(k, _)| k == key);
        self.orders.iter().any(other)
    }

    /// A submit of `order` settled `outcome-unknown` after trying `key`.
    pub fn on_unknown(&mut self, order: usize, key: &str) {
        self.orders
            .entry(order)
            .or_default()
            .unknown
            .push(key.into());
    }

    /// The server charged `order` under `key`; `clock`: the pages' clock (ms since the
    /// epoch).
    pub fn on_charge(&mut self, order: usize, key: &str, clock: f64) {
        // A key sent for an earlier order is that order's attempt: a tab that had not heard
        // of its end sent it for this one, which the docs count as pressed before the end.
        // Whether the tab had heard is not asked here: a try of a later order under a key
        // given up is checked as it leaves (spans.rs's check_send). This moves the charge to
        // that order without a waiver, so the summary does not count it.
        let first = self
            .orders
            .iter()
            .find(|(_, o)| o.keys.iter().any(|(k, _)| k == key));
        let order = first.map_or(order, |(n, _)| *n);
        let o = self.orders.entry(order).or_default();
        let before = o.charged.clone();
        o.charged.push(key.into());
        let sent_from = |k: &str| o.keys.iter().find(|(s, _)| s == k).map(|(_, f)| *f);
        let from = sent_from(key);
        let pairs: Vec<(String, Option<From>)> = before
            .into_iter()
            .filter(|k| k != key)
            .map(|k| (k.clone(), sent_from(&k)))
            .collect();
        let unheard = o.unheard;
        for (prev, before) in pairs {
            let not_durable = self.gave_up.iter().any(|g| g.key == prev && !g.durable);
            let waiver = match (before, from) {
                _ if not_durable => Some(Waiver::EndNotDurable),
                // This key had expired by the pages' clock when the server charged it: a page
                // that found it expired paid under a new one (`prev`), as the docs say. That
                // its try left before the expiry is assumed, not checked: nothing checks a
                // try sent under a key already expired.
                _ if self.expired(key, clock).is_some() => self.expired(key, clock),
                (Some(b), Some(f)) => self.between(order, (&prev, key), b, f, clock),
                _ => None,
            };
            let waiver = self.or_unheard(waiver, unheard);
            let msg = || format!("order {order} charged under {key} after a charge under {prev}");
            self.check(Property::OneCharge, false, waiver, msg);
        }
    }

    /// A page that had not heard a key was given up, `lag_ms` after the call, sent it for
    /// `order`, which it had been sent for before: the order may go out under another key
    /// too, once that page or another hears of it (the docs hold other tabs to the mark
    /// once it reaches them), through [`Waiver::MarkNotHeard`].
    pub fn on_unheard(&mut self, order: usize, lag_ms: f64) {
        self.orders.entry(order).or_default().unheard = Some(lag_ms);
    }

    /// The event `e` a page emitted, checked against the page's `last_state` (what its
    /// previous `state` event reported) and `answered` (the status of the answer it is
    /// handling, if any).
    pub fn on_event(
        &mut self,
        e: &Event,
        last_state: &mut Option<&'static str>,
        answered: Option<u16>,
    ) {
        match &e.kind {
            EventKind::Response { status, .. } if answered != Some(*status) => {
                let msg = format!("response event {status} without that answer ({answered:?})");
                self.fail(Property::EventsInOrder, msg);
            }
            EventKind::State { state, previous } => {
                if let Some(last) = *last_state {
                    if last != *previous {
                        let msg = format!("state event {previous} -> {state} after {last}");
                        self.fail(Property::EventsInOrder, msg);
                    }
                }
                *last_state = Some(state);
            }
            _ => {}
        }
    }
}

/// The order a request body pays (`{"order":N,...}`).
pub fn order_of(body: &str) -> usize {
    body.split([':', ','])
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX)
}
