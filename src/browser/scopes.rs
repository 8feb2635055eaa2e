//! The page's one live [`Inner`] per scope: a `Checkout` opened for a scope (same
//! namespace, scope and `storage`) while another `Checkout` of it is alive, or while work
//! of the scope still runs in the background, shares that one's record, submit in flight,
//! listeners and pending `reset()` or `finish()`, so every `Checkout` of a scope in the
//! page shows one key and one state at every moment. Each `Checkout` has a number, under
//! which its `onEvent` is listed until it is freed.

use crate::prelude::*;
use alloc::rc::{Rc, Weak};

use super::checkout::Inner;
use super::page::PageCell;
use crate::core::options::StorageKind;

/// The scopes of this page, each as long as something holds its [`Inner`].
static OPEN: PageCell<Vec<Weak<Inner>>> = PageCell::new(Vec::new());

/// The number of the last `Checkout` made in this page.
static LAST_ID: PageCell<u32> = PageCell::new(0);

/// The live [`Inner`] of the record `rec_key` kept in `storage` (as asked for in the
/// options, before any fallback), if any; entries nothing holds any more are dropped.
pub(crate) fn find(rec_key: &str, storage: StorageKind) -> Option<Rc<Inner>> {
    OPEN.with(|open| {
        let mut open = open.borrow_mut();
        open.retain(|w| w.strong_count() > 0);
        open.iter()
            .filter_map(Weak::upgrade)
            .find(|i| i.rec_key == rec_key && i.opts.storage == storage)
    })
}

/// Lists `inner` as its scope's live [`Inner`].
pub(crate) fn add(inner: &Rc<Inner>) {
    OPEN.with(|open| open.borrow_mut().push(Rc::downgrade(inner)));
}

/// A number for a new `Checkout`, never given before in this page.
pub(crate) fn next_id() -> u32 {
    LAST_ID.with(|last| {
        let mut last = last.borrow_mut();
        *last += 1;
        *last
    })
}
