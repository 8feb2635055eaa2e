//! localStorage as tabs see it: one origin-wide store whose writes reach the other pages'
//! views late (each page's view is its own cache, filled when the page loads). Writes from
//! one page reach another in the order made; concurrent writes of one key settle on the
//! one made last, in every view. Each write that reaches a view may fire a `storage` event
//! there, which the world delays, reorders or drops.

use std::collections::BTreeMap;

use crate::queue::{Ev, PageId, Queue};
use crate::rng::Rng;

type View = BTreeMap<String, (Option<String>, u64)>;

/// The origin's localStorage and each live page's view of it.
#[derive(Default)]
pub struct Local {
    latest: View,
    views: BTreeMap<PageId, View>,
    /// When the last write from one page reaches another: in order, never earlier.
    fifo: BTreeMap<(PageId, PageId), f64>,
    seq: u64,
    /// The longest a write takes to reach another page's view, in ms.
    pub lag_ms: f64,
}

impl Local {
    /// An empty store whose writes take up to `lag_ms` to reach the other pages.
    pub fn with_lag(lag_ms: f64) -> Local {
        Local {
            lag_ms,
            ..Local::default()
        }
    }

    /// A page loads: its view is the origin's store as it stands.
    pub fn load(&mut self, page: PageId) {
        self.views.insert(page, self.latest.clone());
    }

    /// A page is gone.
    pub fn unload(&mut self, page: PageId) {
        self.views.remove(&page);
    }

    /// `getItem` in `page`.
    pub fn get(&self, page: PageId, key: &str) -> Option<String> {
        self.views.get(&page)?.get(key)?.0.clone()
    }

    /// The keys starting with `prefix` that `page` sees.
    pub fn keys(&self, page: PageId, prefix: &str) -> Vec<String> {
        let Some(v) = self.views.get(&page) else {
            return Vec::new();
        };
        v.iter()
            .filter(|(k, (val, _))| val.is_some() && k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// `setItem` (`Some`) or `removeItem` (`None`) in `page`: seen there at once, by the
    /// other pages within [`Local::lag_ms`], in order.
    pub fn write(
        &mut self,
        page: PageId,
        key: &str,
        value: Option<String>,
        now: f64,
        rng: &mut Rng,
        q: &mut Queue,
    ) {
        self.seq += 1;
        let seq = self.seq;
        self.latest.insert(key.into(), (value.clone(), seq));
        let others: Vec<PageId> = self.views.keys().copied().filter(|p| *p != page).collect();
        if let Some(v) = self.views.get_mut(&page) {
            v.insert(key.into(), (value.clone(), seq));
        }
        for to in others {
            let lag = rng.range(0.0, self.lag_ms);
            let slot = self.fifo.entry((page, to)).or_insert(0.0);
            *slot = slot.max(now + lag);
            let ev = Ev::LocalApply {
                page: to,
                key: key.into(),
                value: value.clone(),
                seq,
            };
            q.at(*slot, ev);
        }
    }

    /// Another page's write `seq` reaches `page`'s view; the value it replaced when it
    /// applies (`Some(old)`), `None` when a later write of the key is already there.
    pub fn apply(
        &mut self,
        page: PageId,
        key: &str,
        value: Option<String>,
        seq: u64,
    ) -> Option<Option<String>> {
        let v = self.views.get_mut(&page)?;
        let old = v.get(key).cloned();
        if old.as_ref().is_some_and(|(_, s)| *s >= seq) {
            return None;
        }
        v.insert(key.into(), (value, seq));
        Some(old.and_then(|(o, _)| o))
    }

    /// The value the origin's store holds now (what a page loading now would see).
    pub fn latest(&self, key: &str) -> Option<String> {
        self.latest.get(key)?.0.clone()
    }
}
