//! Web Locks as the browser gives them: exclusive, granted first come first served per
//! name, and freed by the browser when the holding page dies (its waiting requests go too).

use std::collections::{BTreeMap, VecDeque};

use crate::queue::PageId;

/// Who asks: a page's scope machine.
pub type Holder = (PageId, u64);

/// The origin's Web Locks.
#[derive(Default)]
pub struct Locks {
    held: BTreeMap<String, Holder>,
    waiting: BTreeMap<String, VecDeque<Holder>>,
}

impl Locks {
    /// `who` asks for `name`; `true` when granted at once.
    pub fn request(&mut self, name: &str, who: Holder) -> bool {
        if self.held.contains_key(name) {
            self.waiting.entry(name.into()).or_default().push_back(who);
            return false;
        }
        self.held.insert(name.into(), who);
        true
    }

    /// `who` releases what it holds; the holders granted in its place.
    pub fn release(&mut self, who: Holder) -> Vec<Holder> {
        let names: Vec<String> = self
            .held
            .iter()
            .filter(|(_, h)| **h == who)
            .map(|(n, _)| n.clone())
            .collect();
        names.into_iter().filter_map(|n| self.free(&n)).collect()
    }

    fn free(&mut self, name: &str) -> Option<Holder> {
        self.held.remove(name);
        let next = self.waiting.get_mut(name)?.pop_front()?;
        self.held.insert(name.into(), next);
        Some(next)
    }

    /// `page` died: its requests are dropped and its locks freed; the new holders.
    pub fn page_gone(&mut self, page: PageId) -> Vec<Holder> {
        for w in self.waiting.values_mut() {
            w.retain(|(p, _)| *p != page);
        }
        let names: Vec<String> = self
            .held
            .iter()
            .filter(|(_, (p, _))| *p == page)
            .map(|(n, _)| n.clone())
            .collect();
        names.into_iter().filter_map(|n| self.free(&n)).collect()
    }

    /// Every lock held, with its holder.
    pub fn holders(&self) -> Vec<(String, Holder)> {
        self.held.iter().map(|(n, h)| (n.clone(), *h)).collect()
    }

    /// Every request waiting.
    pub fn waiters(&self) -> Vec<Holder> {
        self.waiting.values().flatten().copied().collect()
    }
}
