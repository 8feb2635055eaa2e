//! Host tests of core::sync's `on_lock` where this tab shows a record another tab posted
//! that was stored after the record the lock holder read (IndexedDB's, or localStorage's
//! where IndexedDB's read failed).

use super::*;
use crate::core::state::State;

pub(super) const NOW: f64 = 1_700_000_000_000.0;
pub(super) const K1: &str = "11111111-1111-4111-8111-111111111111";
pub(super) const K2: &str = "22222222-2222-4222-8222-222222222222";

/// A record of `key`, bound to a payload, `rev` times stored, in `state`.
pub(super) fn rec(key: &str, created: f64, rev: u64, state: State) -> Record {
    let mut r = Record::new(key, "cart", created, 86_400_000.0);
    r.rev = rev;
    r.state = state;
    r.fingerprint = Some("f1:00".into());
    r
}

fn lock(stored: &Record, posted: &Record) -> Current {
    on_lock(
        Some(stored.clone()),
        true,
        None,
        Some(posted),
        Shown::Posted,
        NOW,
    )
}

#[test]
fn a_posted_attempt_stored_after_the_read_one_is_gone_on_from() {
    // The record read is the attempt the server refused; another tab, whose IndexedDB
    // writes failed, began the next attempt of the payload after it and posted it here: its
    // key may have charged, and the docs say a tab re-sends the key it last saw, posted to
    // it or read there.
    let refused = rec(K1, NOW - 900.0, 2, State::Failed);
    let paying = rec(K2, NOW - 100.0, 5, State::Pending);
    assert_eq!(lock(&refused, &paying), Current::Legacy(paying.clone()));
    // The same attempt stored more times since (its answer) is the later state of it.
    let paid = rec(K2, NOW - 100.0, 6, State::Succeeded);
    assert_eq!(lock(&paying, &paid), Current::Legacy(paid.clone()));
    // One begun before the record read is the store's to replace.
    assert_eq!(lock(&paying, &refused), Current::Stored(paying.clone()));
    // A copy this tab shows that was not posted to it is not weighed so.
    assert_eq!(
        on_lock(
            Some(refused.clone()),
            true,
            None,
            Some(&paying),
            Shown::Stored,
            NOW
        ),
        Current::Stored(refused)
    );
}

#[test]
fn a_refused_attempt_posted_is_not_gone_on_from_whatever_its_count() {
    // It charged nothing. Where IndexedDB lost its record, the count began again under the
    // next attempt, and a refused attempt's older copy can carry a higher count.
    let paid = rec(K2, NOW - 100.0, 2, State::Succeeded);
    let refused = rec(K1, NOW - 900.0, 4, State::Failed);
    assert_eq!(lock(&paid, &refused), Current::Stored(paid));
}

#[test]
fn indexeddbs_record_wins_a_tie_of_counts_against_a_posted_copy_of_another_attempt() {
    // The posted copy's tab died after its localStorage copy, before IndexedDB's write:
    // the lock holder that stored the other attempt read the same count.
    let stored = rec(K1, NOW - 900.0, 6, State::Pending);
    let copy = rec(K2, NOW - 100.0, 6, State::Pending);
    assert_eq!(lock(&stored, &copy), Current::Stored(stored.clone()));
    // Where IndexedDB's read failed, localStorage's record read instead may be the late
    // one: the attempt begun later is gone on from.
    assert_eq!(
        on_lock(Some(stored), false, None, Some(&copy), Shown::Posted, NOW),
        Current::Legacy(copy)
    );
}
