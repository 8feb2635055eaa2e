//! Single flight in one tab: while a submit sequence runs, a `submit()` of the same payload
//! joins it (the same promise, the same result) and another payload is refused; `reset()`,
//! `finish()` or another tab giving the key up makes the sequence stop before its next try.

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::{Cell, OnceCell};

use js_sys::Promise;

use super::cell::Slot;

/// One submit sequence of this tab.
pub(crate) struct Flight {
    /// The fingerprint of the payload it sends.
    pub(crate) fp: String,
    promise: OnceCell<Promise>,
    /// The key it sends with, once it has read the scope's record.
    key: Slot<Option<String>>,
    abandoned: Cell<bool>,
}

impl Flight {
    /// Records the key this sequence sends with (another tab may ask to abandon it).
    pub(crate) fn bind(&self, key: &str) {
        self.key.replace(Some(key.into()));
    }

    /// Whether the key was given up: the sequence must not send another try.
    pub(crate) fn abandoned(&self) -> bool {
        self.abandoned.get()
    }
}

/// What a new `submit()` meets.
pub(crate) enum Join {
    /// A sequence of the same payload: its promise.
    Same(Promise),
    /// A sequence of another payload.
    Other,
    /// None.
    Idle,
}

/// The sequence in flight in this tab, if any.
#[derive(Default)]
pub(crate) struct SingleFlight(Slot<Option<Rc<Flight>>>);

impl SingleFlight {
    /// What a `submit()` of the payload with fingerprint `fp` meets.
    pub(crate) fn join(&self, fp: &str) -> Join {
        match &*self.0.borrow() {
            Some(f) if f.fp == fp => f
                .promise
                .get()
                .map_or(Join::Other, |p| Join::Same(p.clone())),
            Some(_) => Join::Other,
            None => Join::Idle,
        }
    }

    /// Whether a sequence is in flight.
    pub(crate) fn busy(&self) -> bool {
        self.0.borrow().is_some()
    }

    /// Starts a sequence for `fp`: `run` turns it into the promise callers share.
    pub(crate) fn start(&self, fp: String, run: impl FnOnce(Rc<Flight>) -> Promise) -> Promise {
        let f = Rc::new(Flight {
            fp,
            promise: OnceCell::new(),
            key: Slot::new(None),
            abandoned: Cell::new(false),
        });
        let p = run(f.clone());
        let _ = f.promise.set(p.clone());
        self.0.replace(Some(f));
        p
    }

    /// The sequence `f` ended; a later one (after an abandon) stays.
    pub(crate) fn end(&self, f: &Rc<Flight>) {
        let mut slot = self.0.borrow_mut();
        if slot.as_ref().is_some_and(|cur| Rc::ptr_eq(cur, f)) {
            *slot = None;
        }
    }

    /// Gives up the sequence in flight: any (`None`, this tab's reset or finish), or only
    /// one sending with `key` (another tab's). The next `submit()` starts a new sequence.
    pub(crate) fn abandon(&self, key: Option<&str>) {
        let mut slot = self.0.borrow_mut();
        let hit = slot.as_ref().is_some_and(|f| match key {
            None => true,
            Some(k) => f.key.borrow().as_deref() == Some(k),
        });
        if hit {
            if let Some(f) = slot.take() {
                f.abandoned.set(true);
            }
        }
    }
}
