//! Host tests of core::ended: marks read back as written, unreadable lines passed over,
//! the sweep's rule, and which attempt a submit called before an end belongs to, in any
//! order the marks are read in.

use super::*;
use crate::core::state::State;

const NOW: f64 = 1_700_000_000_000.0;
const TTL: f64 = 86_400_000.0;
const K1: &str = "11111111-1111-4111-8111-111111111111";
const K2: &str = "22222222-2222-4222-8222-222222222222";
const K3: &str = "33333333-3333-4333-8333-333333333333";

/// The mark of an attempt a page saw `bound` to a payload (or fresh).
fn mark(key: &str, bound: bool) -> Mark {
    Mark {
        key: key.into(),
        bound,
        until: NOW + TTL,
    }
}

fn paid(key: &str) -> Record {
    let mut r = Record::new(key, "cart", NOW - 10.0, TTL);
    r.state = State::Succeeded;
    r.fingerprint = Some("f1:basket".into());
    r
}

fn fresh(key: &str) -> Record {
    Record::new(key, "cart", NOW - 10.0, TTL)
}

/// The marks as a page reads them: each entry's line, in the order given.
fn text(marks: &[Mark]) -> String {
    marks.iter().map(|m| m.line() + "\n").collect()
}

#[test]
fn a_mark_of_an_attempt_seen_paid_covers_every_record_of_its_key() {
    assert!(mark(K1, true).covers(&paid(K1)));
    assert!(mark(K1, true).covers(&fresh(K1)));
    assert!(!mark(K1, true).covers(&paid(K2)), "another key");
}

#[test]
fn a_mark_of_a_key_seen_fresh_leaves_a_payment_another_tab_made_under_it() {
    // A tab that had not heard of the reset() paid under the key: an attempt the page that
    // ended the key never saw. Its charge is shown, not hidden.
    assert!(mark(K1, false).covers(&fresh(K1)));
    assert!(!mark(K1, false).covers(&paid(K1)));
}

#[test]
fn marks_read_back_as_written_and_an_earlier_builds_line_reads_as_bound() {
    let t = text(&[mark(K1, true), mark(K2, false)]);
    assert_eq!(t.lines().count(), 2);
    assert_eq!(
        Mark::decode(t.lines().next().unwrap()),
        Some(mark(K1, true))
    );
    assert_eq!(
        Mark::decode(t.lines().nth(1).unwrap()),
        Some(mark(K2, false))
    );
    let legacy = format!("{K1} {} {}", NOW as u64, (NOW + TTL) as u64);
    assert_eq!(Mark::decode(&legacy), Some(mark(K1, true)));
}

#[test]
fn unreadable_lines_are_passed_over_and_the_others_still_count() {
    let good = mark(K1, true).line();
    for bad in [
        "",
        "garbage",
        "k 12",
        "k 12 x",
        "k -1 5",
        "k 1 2 3",
        " 1 2",
        "{\"v\":1}",
    ] {
        assert!(covers(&format!("{bad}\n{good}"), &paid(K1)), "{bad:?}");
        assert!(covers(&format!("{good}\n{bad}"), &paid(K1)), "{bad:?}");
        assert!(!covers(bad, &paid(K1)), "{bad:?}");
    }
}

#[test]
fn marks_are_due_for_the_sweep_once_every_key_they_name_has_expired() {
    let early = Mark {
        until: NOW,
        ..mark(K1, true)
    };
    let t = text(&[early, mark(K2, true)]);
    assert!(!all_expired(&t, NOW));
    assert!(all_expired(&t, NOW + TTL));
    assert!(all_expired(&text(&[mark(K1, true)]), NOW + TTL));
}

#[test]
fn a_key_reads_bound_only_where_a_line_of_that_key_says_bound() {
    let stored = text(&[mark(K1, true)]);
    assert!(bound(&stored, K1));
    assert!(bound(&text(&[mark(K1, false), mark(K1, true)]), K1));
    assert!(!bound(&text(&[mark(K1, false)]), K1));
    assert!(!bound(&stored, K2));
    assert!(!bound(&format!("{K1}x 1 1"), K1));
    assert!(!bound("", K1));
}

#[test]
fn a_submit_called_before_an_end_it_had_not_heard_of_belongs_to_the_attempt_ended() {
    let ended = text(&[mark(K1, true)]);
    // Pay pressed in tab A while tab B paid K1; B's receipt route called finish().
    assert_eq!(belongs(Some(&paid(K1)), &ended, ""), Belongs::Ended);
    // The same after reset(), whose next key a later submit already stored.
    assert_eq!(belongs(Some(&fresh(K2)), &ended, ""), Belongs::Lost);
    assert_eq!(belongs(None, &ended, ""), Belongs::Lost);
    // Called after the page heard of the end: the next order's.
    assert_eq!(belongs(Some(&paid(K1)), &ended, &ended), Belongs::Live);
    assert_eq!(belongs(None, &ended, &ended), Belongs::Live);
    // No end since: nothing changes.
    assert_eq!(belongs(Some(&paid(K1)), "", ""), Belongs::Live);
}

#[test]
fn an_end_of_another_paid_attempt_since_the_call_loses_the_answer_in_any_order() {
    let heard = text(&[mark(K3, true)]);
    // K1 ended paid, then K2 (the next order) ended paid: the submit was in K1's attempt,
    // whose record K2's replaced. Marks are read in no order: either way, the same.
    for both in [
        text(&[mark(K3, true), mark(K1, true), mark(K2, true)]),
        text(&[mark(K2, true), mark(K3, true), mark(K1, true)]),
    ] {
        assert_eq!(belongs(Some(&paid(K2)), &both, &heard), Belongs::Lost);
        assert_eq!(belongs(Some(&paid(K1)), &both, &heard), Belongs::Lost);
    }
    // K1 ended while nothing was bound under it: nothing was paid there; K2 decides.
    for fresh_first in [
        text(&[mark(K3, true), mark(K1, false), mark(K2, true)]),
        text(&[mark(K2, true), mark(K1, false), mark(K3, true)]),
    ] {
        assert_eq!(
            belongs(Some(&paid(K2)), &fresh_first, &heard),
            Belongs::Ended
        );
    }
    assert_eq!(
        belongs(Some(&fresh(K1)), &text(&[mark(K1, false)]), ""),
        Belongs::Live
    );
    // A page that saw K1 fresh ended it, and a tab that had not heard paid under it: that
    // payment is live, as the mark does not cover it.
    assert_eq!(
        belongs(Some(&paid(K1)), &text(&[mark(K1, false)]), ""),
        Belongs::Live
    );
}

#[test]
fn no_clock_orders_a_submit_and_an_end() {
    // The rule reads no time: the same marks and the same record decide the same whatever
    // the clock says (set back, rounded, or one millisecond for both calls).
    let ended = text(&[mark(K1, true)]);
    let mut late = paid(K1);
    late.created_at = 0.0;
    late.updated_at = 0.0;
    assert_eq!(belongs(Some(&late), &ended, ""), Belongs::Ended);
    assert_eq!(belongs(Some(&late), &ended, &ended), Belongs::Live);
}
