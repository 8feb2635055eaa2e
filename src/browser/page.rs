//! State shared by the whole page (every checkout of the module): the wasm module runs on
//! one thread (it is built without atomics), so a [`Slot`] in a static is enough.

use super::cell::Slot;

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
