//! Host tests of core::sync's `on_lock` where this tab has no IndexedDB: localStorage is its
//! store, and another tab's write can replace this tab's own record there; or had none as
//! it stored its record, whose copy carries no count.

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

// P-tabs-one-key, P-fallback-copy-only: a page whose IndexedDB failed as it stored its
// attempt kept it in its tab's sessionStorage alone (localStorage refused it), with no
// count, and sent it; IndexedDB holds another attempt of the payload, counted, which a page
// that could not read that copy stored (another tab, or this tab's page that ended the
// attempt before it: its end's mark was not heard). A later page of the tab shows its
// tab's copy, and goes on from it, whatever the clocks: its key may have charged, and a tab
// that had read it would have gone on from it rather than begin another attempt.
#[test]
fn an_uncounted_copy_whose_outcome_is_unknown_wins_over_a_counted_attempt_whatever_the_clocks() {
    let copy = rec(K2, NOW - 1_100.0, 0, State::Pending);
    // Begun after it by the clocks (the other tab's page, 307819) or before it (a clock set
    // back 2 s between the two, 278491).
    for created in [NOW - 1_000.0, NOW - 3_000.0] {
        let other = rec(K1, created, 3, State::Pending);
        assert!(began_after(&copy, &other), "{created}");
        assert!(!began_after(&other, &copy), "{created}");
        assert!(store_missed(&copy, Some(&other)));
        let cur = on_lock(
            Some(other.clone()),
            true,
            Some(copy.clone()),
            Some(&copy),
            Shown::Stored,
            NOW,
        );
        assert_eq!(cur, Current::Legacy(copy.clone()), "{created}");
    }
    // A copy with nothing sent under it (fresh) charged nothing: the clocks decide.
    let mut fresh = copy.clone();
    fresh.state = State::Fresh;
    assert!(!began_after(
        &fresh,
        &rec(K1, NOW - 1_000.0, 3, State::Pending)
    ));
    // Where both carry a count, or neither does, the count and the clocks decide as before.
    let counted = rec(K2, NOW - 1_100.0, 2, State::Pending);
    assert!(!began_after(
        &counted,
        &rec(K1, NOW - 3_000.0, 3, State::Pending)
    ));
    assert!(!began_after(
        &copy,
        &rec(K1, NOW - 1_000.0, 0, State::Pending)
    ));
}

// P-no-indexeddb: seed 3542220. A tab without IndexedDB re-sent its attempt K1 (its copies
// uncounted), which the server refused; another tab then stored K2, counted, and sent it.
// A `storage` event of K1's try, pending, reaches a third tab late, after K2's notice: it
// does not replace K2 there (going on from it at the lock wrote K1 over K2 in IndexedDB, and
// K2, charged, was lost to the next Pay, which sent a third key).
#[test]
fn a_late_uncounted_copy_of_an_earlier_attempt_does_not_replace_a_counted_one_shown() {
    let stale = rec(K1, NOW - 1200.0, 0, State::Pending);
    let shown = rec(K2, NOW - 700.0, 3, State::Pending);
    assert!(!supersedes(&stale, &shown, Shown::Posted));
    // Begun later by the clock, it does (its tab could not read K2: the limit the docs admit).
    let later = rec(K1, NOW - 100.0, 0, State::Pending);
    assert!(supersedes(&later, &shown, Shown::Posted));
    // A paid copy of the payload is news whenever it began (core::sync's `began_after`).
    let paid = rec(K1, NOW - 1200.0, 0, State::Succeeded);
    assert!(supersedes(&paid, &shown, Shown::Posted));
}
