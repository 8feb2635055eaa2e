//! State shared by the whole page (every checkout of the module): the wasm module runs on
//! one thread (it is built without atomics), so a `RefCell` in a static is enough.

use core::cell::RefCell;

#[cfg(target_feature = "atomics")]
compile_error!("idemkey's page-wide state assumes a single-threaded wasm module");

/// A `RefCell` that can live in a `static`.
pub(crate) struct PageCell<T>(RefCell<T>);

// SAFETY: the module is single-threaded (no atomics, checked above), so no other thread
// can ever reach the cell.
unsafe impl<T> Sync for PageCell<T> {}

impl<T> PageCell<T> {
    /// A cell holding `value`.
    pub(crate) const fn new(value: T) -> PageCell<T> {
        PageCell(RefCell::new(value))
    }

    /// Runs `f` with the cell, as `LocalKey::with` does.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&RefCell<T>) -> R) -> R {
        f(&self.0)
    }
}
