//! FIFO lanes, one per kind and pair of pages: a delivery on a lane never arrives before the
//! one sent on it before (channel notices between two pages; IndexedDB's answers to a page).

use std::collections::BTreeMap;

use crate::ids::PageId;

/// A kind of delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    /// BroadcastChannel notices.
    Channel,
    /// IndexedDB's answers.
    Idb,
}

/// When the last delivery on each lane arrives.
#[derive(Default)]
pub struct Lanes {
    last: BTreeMap<(Lane, PageId, PageId), f64>,
}

impl Lanes {
    /// The time, at least `now + delay`, at which the next delivery from `from` to `to` on
    /// `lane` arrives: never before the one before.
    pub fn next(&mut self, lane: Lane, from: PageId, to: PageId, now: f64, delay: f64) -> f64 {
        let slot = self.last.entry((lane, from, to)).or_insert(0.0);
        *slot = slot.max(now + delay);
        *slot
    }
}
