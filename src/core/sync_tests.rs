//! Host tests of core::sync: which record the lock holder goes on from, which copy of
//! another tab's beats the one shown (by `rev`, and by the clock only where `rev` cannot
//! tell), and the notices' text.

use super::*;
use crate::core::state::State;

const NOW: f64 = 1_700_000_000_000.0;
const TTL: f64 = 86_400_000.0;
const K1: &str = "11111111-1111-4111-8111-111111111111";
const K2: &str = "22222222-2222-4222-8222-222222222222";

fn rec(key: &str, created: f64, rev: u64) -> Record {
    let mut r = Record::new(key, "cart", created, TTL);
    r.rev = rev;
    r
}

/// [`on_lock`] now, `stored` read from IndexedDB where there is one.
fn lock(
    stored: Option<Record>,
    mirror: Option<Record>,
    shown: Option<&Record>,
    from: Shown,
) -> Current {
    // A mirror's copy is read beside IndexedDB's answer only (record_io's `current_of`).
    let held = stored.is_some() || mirror.is_some();
    on_lock(stored, held, mirror, shown, from, NOW)
}

#[test]
fn the_stored_record_wins_over_a_key_made_at_open() {
    let stored = rec(K1, NOW - 5.0, 2);
    let mine = rec(K2, NOW, 0);
    assert_eq!(
        lock(Some(stored.clone()), None, Some(&mine), Shown::Made),
        Current::Stored(stored.clone())
    );
    // Also when this tab had stored its own record before (another tab reset since).
    assert_eq!(
        lock(Some(stored.clone()), None, Some(&mine), Shown::Stored),
        Current::Stored(stored)
    );
}

#[test]
fn with_nothing_stored_a_key_made_here_becomes_the_scopes() {
    let mine = rec(K2, NOW, 0);
    assert_eq!(lock(None, None, Some(&mine), Shown::Made), Current::Mine);
    assert!(Current::Mine.unstored());
}

#[test]
fn a_shown_record_with_nothing_sent_whose_store_entry_is_gone_is_not_brought_back() {
    // Fresh: no key was sent under it, so the next attempt may have a new one.
    let shown = rec(K1, NOW - 5.0, 3);
    assert_eq!(
        lock(None, None, Some(&shown), Shown::Posted),
        Current::Fresh
    );
    // Its mirror copy is late to disappear (rev > 0: it was in the store once).
    assert_eq!(
        lock(None, Some(shown.clone()), Some(&shown), Shown::Stored),
        Current::Fresh
    );
}

#[test]
fn a_record_an_older_release_left_in_the_mirror_is_moved_over() {
    let mut old = rec(K1, NOW - 5.0, 0);
    old.state = State::Pending;
    old.fingerprint = Some("f1:00".into());
    let mine = rec(K2, NOW, 0);
    let c = lock(None, Some(old.clone()), Some(&mine), Shown::Made);
    assert_eq!(c, Current::Legacy(old.clone()));
    assert!(c.unstored());
    // The store's own record wins over any mirror copy.
    let stored = rec(K2, NOW - 1.0, 1);
    assert_eq!(
        lock(Some(stored.clone()), Some(old), Some(&mine), Shown::Made),
        Current::Stored(stored)
    );
}

#[test]
fn expired_records_count_as_none() {
    let old = rec(K1, NOW - TTL - 1.0, 4);
    let mine = rec(K2, NOW, 0);
    assert_eq!(
        lock(Some(old.clone()), None, Some(&mine), Shown::Made),
        Current::Mine
    );
    let legacy = rec(K1, NOW - TTL - 1.0, 0);
    assert_eq!(
        lock(None, Some(legacy), Some(&mine), Shown::Made),
        Current::Mine
    );
    // This tab's own key expired while the page stayed open: a new one.
    let stale = rec(K2, NOW - TTL, 0);
    assert_eq!(lock(None, None, Some(&stale), Shown::Made), Current::Fresh);
    assert!(!Current::Stored(old).unstored());
}

#[test]
fn another_tabs_copy_supersedes_by_rev_for_the_same_key() {
    let shown = rec(K1, NOW, 3);
    assert!(supersedes(&rec(K1, NOW, 4), &shown, Shown::Stored));
    assert!(supersedes(&rec(K1, NOW, 3), &shown, Shown::Stored));
    assert!(
        !supersedes(&rec(K1, NOW, 2), &shown, Shown::Stored),
        "a late older copy"
    );
}

#[test]
fn another_tabs_copy_of_another_key_supersedes_when_that_attempt_began_later() {
    let shown = rec(K1, NOW, 3);
    // Begun later: stored after it (its stores count on from K1's), whatever the clock
    // said, set back a minute between them or not.
    assert!(supersedes(
        &rec(K2, NOW - 60_000.0, 4),
        &shown,
        Shown::Stored
    ));
    assert!(!supersedes(
        &rec(K2, NOW + 60_000.0, 2),
        &shown,
        Shown::Stored
    ));
    // Where the stores cannot tell (one count: tabs that could not read each other's; 0:
    // a copy IndexedDB does not hold), the clock does.
    for rev in [3, 0] {
        assert!(supersedes(&rec(K2, NOW + 1.0, rev), &shown, Shown::Stored));
        assert!(!supersedes(&rec(K2, NOW - 1.0, rev), &shown, Shown::Stored));
    }
    // A key this tab made up and never stored yields to any stored record.
    let provisional = rec(K2, NOW + 10.0, 0);
    assert!(supersedes(&rec(K1, NOW, 1), &provisional, Shown::Made));
}

#[test]
fn notices_round_trip() {
    for n in [Notice::Stored(r#"{"v":1}"#), Notice::Abandon(K2)] {
        assert_eq!(Notice::parse(&n.encode()), Some(n.clone()));
    }
    // An older release's removal notice reads as nothing: the mark says it all.
    assert_eq!(Notice::parse(&format!("R{K1}")), None);
}

#[test]
fn foreign_or_empty_notices_are_ignored() {
    for t in ["", "S", "A", "X1", "hello", "é1"] {
        assert_eq!(Notice::parse(t), None, "{t:?}");
    }
}

#[test]
fn a_mirror_copy_the_store_missed_wins() {
    let mine = rec(K2, NOW, 0);
    let stored = rec(K1, NOW - 5.0, 2);
    // Same key: a higher rev, or rev 0 (written while the store failed), is news.
    for m in [rec(K1, NOW - 5.0, 3), rec(K1, NOW - 5.0, 0)] {
        assert!(store_missed(&m, Some(&stored)));
        assert_eq!(
            lock(
                Some(stored.clone()),
                Some(m.clone()),
                Some(&mine),
                Shown::Stored
            ),
            Current::Legacy(m)
        );
    }
    // A late copy in another tab is older: the store's record stands.
    for m in [rec(K1, NOW - 5.0, 1), rec(K1, NOW - 5.0, 2)] {
        assert!(!store_missed(&m, Some(&stored)));
    }
    // Another key: only a later attempt than the stored one, by the stores counted, not
    // by a clock set back between them.
    assert!(store_missed(&rec(K2, NOW - 60_000.0, 3), Some(&stored)));
    assert!(!store_missed(&rec(K2, NOW + 60_000.0, 1), Some(&stored)));
    assert!(!store_missed(&rec(K2, NOW - 9.0, 0), Some(&stored)));
    // An expired copy never wins.
    let old = rec(K1, NOW - TTL - 1.0, 9);
    assert_eq!(
        lock(Some(stored.clone()), Some(old), Some(&mine), Shown::Stored),
        Current::Stored(stored)
    );
}

#[test]
fn with_nothing_stored_a_pending_copy_is_kept_and_a_finished_one_is_not() {
    let shown = rec(K1, NOW - 5.0, 3);
    let mut pending = shown.clone();
    pending.state = State::Pending;
    pending.fingerprint = Some("f1:00".into());
    // The store lost it (cleared, or its writes failed): the key that may have charged stays.
    assert_eq!(
        lock(None, Some(pending.clone()), Some(&shown), Shown::Stored),
        Current::Legacy(pending)
    );
    for state in [State::Fresh, State::Succeeded, State::Failed] {
        let mut m = shown.clone();
        m.state = state;
        assert!(!store_missed(&m, None), "{state:?}");
        assert_eq!(
            lock(None, Some(m), Some(&shown), Shown::Stored),
            Current::Fresh
        );
        // Unless it was written while the store failed.
        let mut z = rec(K1, NOW - 5.0, 0);
        z.state = state;
        assert!(store_missed(&z, None), "{state:?}");
    }
}

#[test]
fn a_posted_record_bound_to_a_payload_is_gone_on_from_where_nothing_live_is_stored() {
    // Another tab's payment, posted to this tab; the store's read failed or was cleared,
    // or it holds only an attempt a page ended (the caller leaves it out), and the mirror
    // has not had the copy yet: its key, never a new one.
    for state in [State::Pending, State::Succeeded, State::Failed] {
        let mut shown = rec(K1, NOW - 5.0, 3);
        shown.state = state;
        shown.fingerprint = Some("f1:00".into());
        assert_eq!(
            lock(None, None, Some(&shown), Shown::Posted),
            Current::Legacy(shown.clone()),
            "{state:?}"
        );
        // A live stored record goes on as always (another payload is refused, not paid),
        // unless the posted one was stored after it (the test below).
        let later = rec(K2, NOW - 50.0, 4);
        assert_eq!(
            lock(Some(later.clone()), None, Some(&shown), Shown::Posted),
            Current::Stored(later)
        );
        // A record this tab read from its own mirror is that copy: a pending one kept, one
        // with a final answer the store no longer holds finished.
        let kept = match state {
            State::Pending => Current::Legacy(shown.clone()),
            _ => Current::Fresh,
        };
        assert_eq!(
            lock(None, Some(shown.clone()), Some(&shown), Shown::Stored),
            kept
        );
        // Nor is this tab's own record weighed without a copy where IndexedDB answered: its
        // writes are in its own store and mirror (where it did not, sync_own_tests.rs).
        assert_eq!(
            on_lock(None, true, None, Some(&shown), Shown::Stored, NOW),
            Current::Fresh
        );
        // Ended by a page (the caller leaves it out): a new attempt.
        assert_eq!(lock(None, None, None, Shown::Posted), Current::Fresh);
        // Expired: nothing to go on from.
        assert_eq!(
            on_lock(None, false, None, Some(&shown), Shown::Posted, NOW + TTL),
            Current::Fresh
        );
    }
}

/// Two attempts of one payload that the count cannot order: a paid one and one whose
/// outcome is unknown.
fn paid_and_unknown(paid_rev: u64, paid_created: f64) -> (Record, Record) {
    let mut paid = rec(K1, paid_created, paid_rev);
    paid.state = State::Succeeded;
    paid.fingerprint = Some("f1:x".into());
    paid.response = Some(crate::core::record::StoredResponse {
        status: 201,
        body: "{}".into(),
        replayed: false,
    });
    let mut unknown = rec(K2, NOW - 500.0, 4);
    unknown.state = State::Pending;
    unknown.fingerprint = Some("f1:x".into());
    (paid, unknown)
}

// A tab without IndexedDB paid the payload, its copy in localStorage alone (no count);
// IndexedDB still holds another tab's pending attempt of the same payload, begun later by
// that tab's clock. The lock holder goes on from the paid one: nothing is sent again.
#[test]
fn an_uncounted_paid_copy_wins_over_a_stored_attempt_of_its_payload_whatever_the_clocks() {
    let (paid, unknown) = paid_and_unknown(0, NOW - 2_000.0);
    assert!(began_after(&paid, &unknown));
    assert!(!began_after(&unknown, &paid));
    let cur = lock(
        Some(unknown.clone()),
        Some(paid.clone()),
        None,
        Shown::Stored,
    );
    assert_eq!(cur, Current::Legacy(paid.clone()));
    // The other way round (the paid one stored, the unknown one a copy): the same.
    let (mut paid, mut unknown) = (paid, unknown);
    paid.rev = 4;
    unknown.rev = 0;
    assert_eq!(
        lock(Some(paid.clone()), Some(unknown), None, Shown::Stored),
        Current::Stored(paid)
    );
}

// Where the count orders them, it decides, as for any two attempts.
#[test]
fn a_counted_later_attempt_of_the_payload_is_later_even_when_the_other_is_paid() {
    let (paid, unknown) = paid_and_unknown(3, NOW - 2_000.0);
    assert!(began_after(&unknown, &paid));
}

// A page with a shorter `ttlSeconds` took the paid attempt for expired, as the docs say it
// must, and began another attempt of the payload (without IndexedDB: no count): that one
// is the later, not the paid one, whose key that page had given up.
#[test]
fn a_paid_attempt_expired_for_the_page_that_began_the_other_is_not_taken_for_the_later() {
    let (paid, _) = paid_and_unknown(0, NOW - 120_000.0);
    let mut later = rec(K2, NOW, 0);
    later.expires_at = NOW + 60_000.0;
    later.state = State::Pending;
    later.fingerprint = Some("f1:x".into());
    assert!(began_after(&later, &paid));
    assert!(!began_after(&paid, &later));
}

// A tab shows a paid attempt that has expired; another tab's live attempt of the payload,
// stored as many times, is shown over it when its notice comes.
#[test]
fn a_live_attempt_of_the_payload_supersedes_an_expired_paid_one_shown() {
    let (mut paid, _) = paid_and_unknown(3, 2_667.0);
    paid.expires_at = 2_667.0 + 20_000.0;
    let mut live = rec(K2, 30_000.0, 3);
    live.expires_at = 50_000.0;
    live.state = State::Pending;
    live.fingerprint = Some("f1:x".into());
    assert!(supersedes(&live, &paid, Shown::Stored));
}

// A tab without IndexedDB began an attempt of the next order (its copy in localStorage
// alone, no count); IndexedDB still holds the order before's attempt, which the server
// refused (failed), begun later by the pages' clocks (one was set back between the two).
// Going on from the failed one starts yet another attempt under a new key, where the
// pending one may have charged: the one that failed is taken for the earlier, whatever the
// clocks, and the pending copy is gone on from (its key sent again, answered once).
#[test]
fn an_uncounted_attempt_wins_over_a_failed_one_whatever_the_clocks() {
    let mut failed = rec(K1, NOW, 2);
    failed.state = State::Failed;
    failed.fingerprint = Some("f1:order-0".into());
    let mut pending = rec(K2, NOW - 2_000.0, 0);
    pending.state = State::Pending;
    pending.fingerprint = Some("f1:order-1".into());
    assert!(began_after(&pending, &failed));
    assert!(!began_after(&failed, &pending));
    let cur = lock(
        Some(failed.clone()),
        Some(pending.clone()),
        None,
        Shown::Stored,
    );
    assert_eq!(cur, Current::Legacy(pending.clone()));
    // A paid one too: going on from it answers, going on from the failed one pays again.
    let mut paid = pending;
    paid.state = State::Succeeded;
    assert!(began_after(&paid, &failed));
    // Where the count orders them, it decides, as for any two attempts.
    let mut counted = paid;
    counted.rev = 1;
    assert!(!began_after(&counted, &failed));
}
