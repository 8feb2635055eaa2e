//! [`Slot`], the glue's `RefCell`: a borrow conflict traps, which is what a panic does in
//! this module anyway (see the panic handler in lib.rs). `RefCell`'s own borrows each call
//! a panic with the caller's location, bytes at every borrow for a message nobody reads:
//! without them the gzipped wasm was 0.36 KiB smaller, measured when core's panics still
//! built messages. (The release build now compiles core with panic=immediate-abort, see the
//! Makefile's `build`, where a `RefCell`'s panic would trap much as a `Slot` does.)

use core::cell::{Ref, RefCell, RefMut};

/// A `RefCell` whose conflicting borrow traps instead of panicking.
#[derive(Default)]
pub(crate) struct Slot<T>(RefCell<T>);

impl<T> Slot<T> {
    /// A slot holding `value`.
    pub(crate) const fn new(value: T) -> Slot<T> {
        Slot(RefCell::new(value))
    }

    /// The value, shared; traps if it is mutably borrowed.
    pub(crate) fn borrow(&self) -> Ref<'_, T> {
        self.0
            .try_borrow()
            .unwrap_or_else(|_| core::arch::wasm32::unreachable())
    }

    /// The value, exclusively; traps if it is borrowed.
    pub(crate) fn borrow_mut(&self) -> RefMut<'_, T> {
        self.0
            .try_borrow_mut()
            .unwrap_or_else(|_| core::arch::wasm32::unreachable())
    }

    /// Puts `value` in and returns the old value.
    pub(crate) fn replace(&self, value: T) -> T {
        core::mem::replace(&mut *self.borrow_mut(), value)
    }

    /// Takes the value out, leaving the default.
    pub(crate) fn take(&self) -> T
    where
        T: Default,
    {
        core::mem::take(&mut *self.borrow_mut())
    }
}
