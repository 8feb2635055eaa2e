//! Host tests of core::sync's `on_lock` where this tab has no IndexedDB: localStorage is its
//! store, and another tab's write can replace this tab's own record there.

use super::posted_tests::{rec, K1, K2, NOW};
use super::*;
use crate::core::state::State;

/// The lock holder without IndexedDB: localStorage's record is the store's (not held).
fn lock(web: &Record, own: &Record, from: Shown) -> Current {
    on_lock(Some(web.clone()), false, None, Some(own), from, NOW)
}

// P-no-indexeddb: a page without IndexedDB goes on from the record it wrote, not from the
// one another tab wrote over it in localStorage.
#[test]
fn a_paid_attempt_of_this_tab_is_gone_on_from_over_an_earlier_one_that_replaced_it() {
    // This tab, without IndexedDB, paid the payload under K2 (its record in localStorage
    // alone); another tab, which had not had that copy yet (localStorage's lag), stored an
    // attempt of the payload it had begun, K1, over it there, and died before its try.
    // Going on from K1 sends a second key for a paid order.
    let paid = rec(K2, NOW - 400.0, 4, State::Succeeded);
    let unsent = rec(K1, NOW - 1300.0, 3, State::Pending);
    assert_eq!(
        lock(&unsent, &paid, Shown::Stored),
        Current::Legacy(paid.clone())
    );
    // An attempt begun after this tab's (counted on from it) is the store's, as always.
    let next = rec(K1, NOW - 100.0, 5, State::Pending);
    assert_eq!(lock(&next, &paid, Shown::Stored), Current::Stored(next));
    // A refused attempt charged nothing: the store's record is gone on from.
    let refused = rec(K2, NOW - 400.0, 4, State::Failed);
    assert_eq!(
        lock(&unsent, &refused, Shown::Stored),
        Current::Stored(unsent.clone())
    );
    // A key this tab made up (never stored) never replaces the store's.
    assert_eq!(lock(&unsent, &paid, Shown::Made), Current::Stored(unsent));
}

// P-no-indexeddb: a page whose store's read failed re-sends the key it last read there.
#[test]
fn an_attempt_this_tab_read_is_gone_on_from_where_localstorage_has_nothing_live() {
    // This tab read the paid attempt K1 from IndexedDB and answered from it; at its next Pay
    // IndexedDB's read failed, and localStorage, read instead, has nothing live (its view
    // has not had the copy yet, or a late sweep deleted it). A new key would pay the order
    // again.
    let paid = rec(K1, NOW - 400.0, 2, State::Succeeded);
    let none = on_lock(None, false, None, Some(&paid), Shown::Committed, NOW);
    assert_eq!(none, Current::Legacy(paid.clone()));
    // IndexedDB answered that it holds nothing: the record was finished (P-idb-lost-record).
    let none = on_lock(None, true, None, Some(&paid), Shown::Committed, NOW);
    assert_eq!(none, Current::Fresh);
    // A record bound to no payload charged nothing.
    let mut unbound = paid.clone();
    unbound.fingerprint = None;
    let none = on_lock(None, false, None, Some(&unbound), Shown::Stored, NOW);
    assert_eq!(none, Current::Fresh);
}
