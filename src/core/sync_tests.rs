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

#[test]
fn the_stored_record_wins_over_a_key_made_at_open() {
    let stored = rec(K1, NOW - 5.0, 2);
    let mine = rec(K2, NOW, 0);
    assert_eq!(
        on_lock(Some(stored.clone()), None, &mine, false, NOW),
        Current::Stored(stored.clone())
    );
    // Also when this tab had stored its own record before (another tab reset since).
    assert_eq!(
        on_lock(Some(stored.clone()), None, &mine, true, NOW),
        Current::Stored(stored)
    );
}

#[test]
fn with_nothing_stored_a_key_made_here_becomes_the_scopes() {
    let mine = rec(K2, NOW, 0);
    assert_eq!(on_lock(None, None, &mine, false, NOW), Current::Mine);
    assert!(Current::Mine.unstored());
}

#[test]
fn a_shown_record_whose_store_entry_is_gone_is_not_brought_back() {
    // Another tab finished it: the next attempt gets a new key.
    let shown = rec(K1, NOW - 5.0, 3);
    assert_eq!(on_lock(None, None, &shown, true, NOW), Current::Fresh);
    // Its mirror copy is late to disappear (rev > 0: it was in the store once).
    assert_eq!(
        on_lock(None, Some(shown.clone()), &shown, true, NOW),
        Current::Fresh
    );
}

#[test]
fn a_record_an_older_release_left_in_the_mirror_is_moved_over() {
    let mut old = rec(K1, NOW - 5.0, 0);
    old.state = State::Pending;
    old.fingerprint = Some("f1:00".into());
    let mine = rec(K2, NOW, 0);
    let c = on_lock(None, Some(old.clone()), &mine, false, NOW);
    assert_eq!(c, Current::Legacy(old.clone()));
    assert!(c.unstored());
    // The store's own record wins over any mirror copy.
    let stored = rec(K2, NOW - 1.0, 1);
    assert_eq!(
        on_lock(Some(stored.clone()), Some(old), &mine, false, NOW),
        Current::Stored(stored)
    );
}

#[test]
fn expired_records_count_as_none() {
    let old = rec(K1, NOW - TTL - 1.0, 4);
    let mine = rec(K2, NOW, 0);
    assert_eq!(
        on_lock(Some(old.clone()), None, &mine, false, NOW),
        Current::Mine
    );
    let legacy = rec(K1, NOW - TTL - 1.0, 0);
    assert_eq!(
        on_lock(None, Some(legacy), &mine, false, NOW),
        Current::Mine
    );
    // This tab's own key expired while the page stayed open: a new one.
    let stale = rec(K2, NOW - TTL, 0);
    assert_eq!(on_lock(None, None, &stale, false, NOW), Current::Fresh);
    assert!(!Current::Stored(old).unstored());
}

#[test]
fn another_tabs_copy_supersedes_by_rev_for_the_same_key() {
    let shown = rec(K1, NOW, 3);
    assert!(supersedes(&rec(K1, NOW, 4), &shown, true));
    assert!(supersedes(&rec(K1, NOW, 3), &shown, true));
    assert!(
        !supersedes(&rec(K1, NOW, 2), &shown, true),
        "a late older copy"
    );
}

#[test]
fn another_tabs_copy_of_another_key_supersedes_when_that_attempt_began_later() {
    let shown = rec(K1, NOW, 3);
    assert!(supersedes(&rec(K2, NOW + 1.0, 1), &shown, true));
    assert!(!supersedes(&rec(K2, NOW - 1.0, 9), &shown, true));
    // A key this tab made up and never stored yields to any stored record.
    let provisional = rec(K2, NOW + 10.0, 0);
    assert!(supersedes(&rec(K1, NOW, 1), &provisional, false));
}

#[test]
fn a_removal_ends_only_the_stored_key_it_names() {
    let shown = rec(K1, NOW, 2);
    assert!(removes(K1, &shown, true));
    assert!(!removes(K2, &shown, true));
    assert!(
        !removes(K1, &shown, false),
        "a key never stored was not removed"
    );
}

/// The mark of a `reset()` or `finish()` at `since` that gave up `key`.
fn gave_up(key: &str, since: f64) -> crate::core::ended::Mark {
    crate::core::ended::Mark {
        key: key.into(),
        since,
        until: since + TTL,
    }
}

#[test]
fn reset_and_finish_replace_only_the_attempt_the_page_saw() {
    let stored = rec(K1, NOW, 2);
    assert!(may_replace(Some(&stored), &gave_up(K1, NOW), NOW));
    assert!(
        !may_replace(Some(&stored), &gave_up(K2, NOW), NOW),
        "another tab's newer attempt"
    );
    assert!(may_replace(None, &gave_up(K2, NOW), NOW));
    let old = rec(K1, NOW - TTL, 2);
    assert!(
        may_replace(Some(&old), &gave_up(K2, NOW), NOW),
        "an expired record is nobody's"
    );
}

/// finish() (or reset()) in one tab gives up the attempt the page saw, not the next order
/// that another tab, still showing the same unsent key, paid under it after the call.
#[test]
fn finish_does_not_forget_the_next_order_paid_under_the_key_it_gave_up() {
    let finished_at = NOW + 10.0;
    let mut paid = rec(K1, NOW, 4);
    paid.state = State::Succeeded;
    paid.fingerprint = Some("f1:next-order".into());
    paid.submitted_at = finished_at + 1.0;
    assert!(
        !may_replace(Some(&paid), &gave_up(K1, finished_at), NOW + 20.0),
        "paid by a Pay pressed after finish(): the next order's charge is kept"
    );
    paid.submitted_at = finished_at - 1.0;
    assert!(
        may_replace(Some(&paid), &gave_up(K1, finished_at), NOW + 20.0),
        "paid by a Pay pressed before finish(): the order it ended, given up"
    );
    paid.submitted_at = 0.0;
    assert!(
        may_replace(Some(&paid), &gave_up(K1, finished_at), NOW + 20.0),
        "a record an older release wrote (no submittedAt) is given up as before"
    );
    paid.submitted_at = finished_at;
    assert!(
        may_replace(Some(&paid), &gave_up(K1, finished_at), NOW + 20.0),
        "a Pay in the very millisecond of finish(): the page's own order, given up"
    );
}

#[test]
fn notices_round_trip() {
    for n in [
        Notice::Stored(r#"{"v":1}"#),
        Notice::Removed(K1),
        Notice::Abandon(K2),
    ] {
        assert_eq!(Notice::parse(&n.encode()), Some(n.clone()));
    }
    assert_eq!(Notice::Removed(K1).encode(), format!("R{K1}"));
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
            on_lock(Some(stored.clone()), Some(m.clone()), &mine, true, NOW),
            Current::Legacy(m)
        );
    }
    // A late copy in another tab is older: the store's record stands.
    for m in [rec(K1, NOW - 5.0, 1), rec(K1, NOW - 5.0, 2)] {
        assert!(!store_missed(&m, Some(&stored)));
    }
    // Another key: only a later attempt than the stored one.
    assert!(store_missed(&rec(K2, NOW, 1), Some(&stored)));
    assert!(!store_missed(&rec(K2, NOW - 9.0, 0), Some(&stored)));
    // An expired copy never wins.
    let old = rec(K1, NOW - TTL - 1.0, 9);
    assert_eq!(
        on_lock(Some(stored.clone()), Some(old), &mine, true, NOW),
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
        on_lock(None, Some(pending.clone()), &shown, true, NOW),
        Current::Legacy(pending)
    );
    for state in [State::Fresh, State::Succeeded, State::Failed] {
        let mut m = shown.clone();
        m.state = state;
        assert!(!store_missed(&m, None), "{state:?}");
        assert_eq!(on_lock(None, Some(m), &shown, true, NOW), Current::Fresh);
        // Unless it was written while the store failed.
        let mut z = rec(K1, NOW - 5.0, 0);
        z.state = state;
        assert!(store_missed(&z, None), "{state:?}");
    }
}
