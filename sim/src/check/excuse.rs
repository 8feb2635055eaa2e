//! Which limit the docs admit explains a second key of one order, or a second charge: the
//! [`Waiver`] the checker may let such a violation pass through (an expired key, another
//! tab's own record, a record that fell back or was read late without IndexedDB). The
//! checker's one-key and one-charge checks ask here.

use super::{Checker, From, Order};
use crate::waiver::Waiver;

impl Checker {
    /// The shortest time between the binding of `prev` for `order` and that of another key
    /// of the order from another tab, or from another page of the tab where one of the
    /// two was restored from the back/forward cache, IndexedDB failed in one of the two (its
    /// record in localStorage alone): within localStorage's lag, either page may have missed
    /// the other's record, or replaced it, and a later Pay goes on from what is left. A
    /// key's binding is when a page first showed it bound to the payload ([`From::bound`]):
    /// the docs bound when the two Pays were pressed, which is when a page chose its key
    /// from what it could read, not when its try left (a tab frozen between its record's
    /// write and its try, a later Pay resuming the attempt its last one left unknown, or
    /// a later page that read the record, sends it later).
    fn collision(&self, order: usize, prev: &str) -> Option<f64> {
        let keys = &self.orders.get(&order)?.keys;
        let (_, a) = keys.iter().find(|(k, _)| k == prev)?;
        // Of two pages of one tab, the later sender restored: the docs admit "a page and the
        // page restored after it", not a page loaded after a restored one.
        let apart = |b: &From| {
            a.tab != b.tab
                || (a.page != b.page
                    && ((a.restored && a.at > b.at) || (b.restored && b.at > a.at)))
        };
        keys.iter()
            .filter(|(k, b)| k != prev && apart(b) && (a.unordered || b.unordered))
            .map(|(_, b)| (b.bound - a.bound).abs())
            .reduce(f64::min)
    }

    /// The waiver, if any, for `key` of `order` sent or charged from `from` after `prev`,
    /// sent from `before`: `prev` expired, lost with the page memory it lived in, another
    /// tab's own, or `prev`'s record unordered with another tab's ([`Checker::collision`])
    /// where the page that sent `key` had not shown `prev`, or replaced or swept before
    /// `key` first left (`from.at`).
    pub(super) fn between(
        &self,
        order: usize,
        (prev, key): (&str, &str),
        before: From,
        from: From,
        clock: f64,
    ) -> Option<Waiver> {
        let saw = |o: &Order| o.saw.iter().any(|(k, p)| k == key && p == prev);
        let held = |o: &Order| o.held.iter().any(|(k, p)| k == key && p == prev);
        // The record of `prev` that only localStorage held was replaced by another tab's
        // write, or removed by a late sweep: a page that neither sent `prev` nor showed it
        // had nothing that held it.
        let unseen = !self.orders.get(&order).is_some_and(held) && from.page != before.page;
        // Only a loss before the key after first left: one after it did not make it.
        let before_sent = |at: Option<&f64>| at.is_some_and(|at| *at <= from.at);
        let replaced = match prev {
            _ if !self.web_locks => None,
            p if before_sent(self.replaced.get(p)) => Some(Waiver::Replaced { unseen }),
            p if before_sent(self.swept.get(p)) => Some(Waiver::Swept { unseen }),
            _ => None,
        };
        if let Some(w) = self.expired(prev, clock) {
            Some(w)
        } else if !self.web_locks && before.tab != from.tab {
            Some(Waiver::OwnTab { other_tab: true })
        } else if before.own || from.own {
            // Another page of the tab finds a record its tab's sessionStorage keeps, unless
            // one of the two pages had it in page memory.
            let later = from.page != before.page && (before.memory || from.memory);
            Some(Waiver::FellBack {
                own: true,
                elsewhere: before.tab != from.tab || later,
            })
        } else if before.tab != from.tab
            && ((before.fell && from.unordered) || (from.fell && before.unordered))
        {
            // One tab's copy stepped down to its own storage, the other tab has no
            // IndexedDB: that tab has its own key.
            Some(Waiver::FellBack {
                own: true,
                elsewhere: true,
            })
        } else if before.tab == from.tab
            && before.memory
            && from.unordered
            && !self.orders.get(&order).is_some_and(saw)
        {
            // The key before's record was in IndexedDB alone (its copy in page memory),
            // and IndexedDB failed in the page that sent the key after, which never saw
            // the key before (nothing it could read held it).
            Some(Waiver::BothFailed {
                memory: before.memory,
                later_page: from.page != before.page,
            })
        } else if let Some(lag_ms) = self
            .collision(order, prev)
            .filter(|_| !self.orders.get(&order).is_some_and(saw))
        {
            let w = Waiver::Unordered { lag_ms };
            Some(replaced.filter(|_| !w.within_bound()).unwrap_or(w))
        } else if replaced.is_some() {
            replaced
        } else {
            (!self.web_locks).then_some(Waiver::OwnTab { other_tab: false })
        }
    }

    /// Whether `key` went out before from a page of `tab` whose record was its tab's or its
    /// own ([`From::own`]): a later page of the tab that sends it again read it in its tab's
    /// sessionStorage, where that record lives alone, and is held to it as that page was
    /// (the docs: "`session` keeps the key across refreshes of that tab only (another tab
    /// has its own key)"), whatever its own IndexedDB does.
    pub(super) fn kept_by_tab(&self, key: &str, tab: crate::ids::TabId) -> bool {
        let keys = self.orders.values().flat_map(|o| &o.keys);
        keys.into_iter()
            .any(|(k, f)| k == key && f.tab == tab && f.own)
    }

    /// Takes from the world the keys whose record, in localStorage alone, another tab
    /// replaced or a late sweep removed ([`Waiver::Replaced`], [`Waiver::Swept`]), with when
    /// it first was: [`Checker::between`] holds each against when the key after left.
    pub fn lost_from(&mut self, env: &crate::env::Env) {
        self.replaced = env.replaced(false);
        self.swept = env.replaced(true);
    }

    /// [`Waiver::KeyExpired`] if `key` had expired by the page's clock `clock`.
    pub(super) fn expired(&self, key: &str, clock: f64) -> Option<Waiver> {
        let e = self.expiry.get(key)?;
        (clock >= *e).then_some(Waiver::KeyExpired {
            past_ms: clock - *e,
        })
    }

    /// `waiver`, or where it is missing or out of its bound, [`Waiver::MarkNotHeard`] if a
    /// tab that had not heard the order's first key was given up sent it for the order
    /// (`unheard`: how long after the end): either may admit a second key.
    /// [`Waiver::MarkNotHeard`] never waives a second charge ([`Waiver::waives`]): in
    /// [`Checker::on_charge`] it changes no verdict, only the message.
    pub(super) fn or_unheard(
        &self,
        waiver: Option<Waiver>,
        unheard: Option<f64>,
    ) -> Option<Waiver> {
        let unheard = unheard.map(|lag_ms| Waiver::MarkNotHeard { lag_ms });
        match waiver {
            Some(w) if !w.within_bound() && unheard.is_some() => unheard,
            w => w.or(unheard),
        }
    }
}
