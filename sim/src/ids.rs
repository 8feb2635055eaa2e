//! The ids of a run's tabs and pages, which the queue's events and the user's moves name.

/// A page's id (one load of a tab); never reused in a run.
pub type PageId = usize;
/// A tab's id (its pages come one after another: reloads).
pub type TabId = usize;
