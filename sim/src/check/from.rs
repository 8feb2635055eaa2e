//! Where a try came from: its tab and page, where its page's record lived, and what the
//! page could read of other tabs' records, as the checker's waivers ask.

use crate::ids::{PageId, TabId};

/// Where a try came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct From {
    /// The tab.
    pub tab: TabId,
    /// The page.
    pub page: PageId,
    /// The page's record lived in page memory (Web Storage refused it).
    pub memory: bool,
    /// The page's record was its tab's or its own, not shared with other tabs (no Web
    /// Locks, or IndexedDB failed in the page and localStorage refused it).
    pub own: bool,
    /// IndexedDB failed in the page: its record is in localStorage alone, which other tabs
    /// read late.
    pub unordered: bool,
    /// The page's Web Storage copy of the record had stepped down from localStorage (it
    /// refused it): a tab that reads Web Storage alone does not see it.
    pub fell: bool,
    /// The page was restored from the back/forward cache: its view of localStorage is the
    /// one it had, which the pages of its tab wrote to meanwhile reach late, as another
    /// tab's writes do (a page that loads reads the store as it stands).
    pub restored: bool,
    /// When the try left (simulated ms).
    pub at: f64,
    /// When a page first showed the key bound to a payload (simulated ms): when the Pay
    /// that bound it chose it, from what it could read then. A try can leave much later
    /// (a tab frozen in between, a later Pay resuming it, a later page that read it).
    pub bound: f64,
}
