//! State shared by the whole page (every checkout of the module): the wasm module runs on
//! one thread (it is built without atomics), so a [`Slot`] in a static is enough.

use super::cell::Slot;
use crate::prelude::*;

#[cfg(target_feature = "atomics")]
compile_error!("idemkey's page-wide state assumes a single-threaded wasm module");

/// A [`Slot`] that can live in a `static`.
pub(crate) struct PageCell<T>(Slot<T>);

// SAFETY: the module is single-threaded (no atomics, checked above), so no other thread
// can ever reach the cell.
unsafe impl<T> Sync for PageCell<T> {}

impl<T> PageCell<T> {
    /// A cell holding `value`.
    pub(crate) const fn new(value: T) -> PageCell<T> {
        PageCell(Slot::new(value))
    }

    /// Runs `f` with the cell, as `LocalKey::with` does.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Slot<T>) -> R) -> R {
        f(&self.0)
    }
}

impl<T: PartialEq> PageCell<Vec<T>> {
    /// Records `item`; whether this page had not recorded it before (for work done once per
    /// page, such as a sweep).
    pub(crate) fn first_time(&self, item: T) -> bool {
        let mut seen = self.0.borrow_mut();
        let first = !seen.contains(&item);
        if first {
            seen.push(item);
        }
        first
    }
}
