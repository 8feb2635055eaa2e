use super::*;
use crate::core::state::State;

const NOW: f64 = 1_700_000_000_000.0;
const TTL: f64 = 86_400_000.0;
const K1: &str = "11111111-1111-4111-8111-111111111111";
const K2: &str = "22222222-2222-4222-8222-222222222222";

fn mark(key: &str, since: f64) -> Mark {
    Mark {
        key: key.into(),
        since,
        until: since + TTL,
    }
}

fn paid(key: &str, bound_at: f64) -> Record {
    let mut r = Record::new(key, "cart", NOW - 10.0, TTL);
    r.state = State::Succeeded;
    r.submitted_at = bound_at;
    r
}

#[test]
fn a_finished_attempt_is_covered_whatever_its_state() {
    let m = mark(K1, NOW);
    assert!(m.covers(&paid(K1, NOW - 5.0)));
    // Bound in the very millisecond of the finish(): the page ended that order too.
    assert!(m.covers(&paid(K1, NOW)));
    // Never bound (fresh, proposed at open()).
    assert!(m.covers(&Record::new(K1, "cart", NOW - 10.0, TTL)));
    // Another key is another attempt.
    assert!(!m.covers(&paid(K2, NOW - 5.0)));
}

#[test]
fn the_same_key_bound_after_the_mark_is_the_next_orders_and_stays() {
    // A tab that had not heard of the finish() paid the next order under the key it showed.
    assert!(!mark(K1, NOW).covers(&paid(K1, NOW + 1.0)));
}

#[test]
fn marks_read_back_as_written() {
    let mut e = Ended::default();
    e.add(mark(K1, NOW), NOW);
    e.add(mark(K2, NOW + 3.0), NOW + 3.0);
    let text = e.encode();
    assert_eq!(Ended::decode(&text), e);
    assert!(Ended::decode(&text).covers(&paid(K2, NOW)));
}

#[test]
fn unreadable_lines_are_passed_over_and_the_others_still_count() {
    let good = format!("{K1} {} {}", NOW as u64, (NOW + TTL) as u64);
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
        let e = Ended::decode(&format!("{bad}\n{good}"));
        assert!(e.covers(&paid(K1, NOW - 1.0)), "{bad:?}");
        assert!(!Ended::decode(bad).covers(&paid(K1, NOW - 1.0)), "{bad:?}");
    }
}

#[test]
fn expired_marks_go_and_only_the_last_few_are_kept() {
    let mut e = Ended::default();
    e.add(mark(K1, NOW), NOW);
    // K1 expired: nothing can still hold it as live, and its mark is dropped.
    e.add(mark(K2, NOW + TTL), NOW + TTL);
    assert!(!e.covers(&paid(K1, NOW - 1.0)));
    assert!(e.covers(&paid(K2, NOW)));
    let mut e = Ended::default();
    for i in 0..(MARKS_KEPT + 3) {
        e.add(mark(&format!("k{i}"), NOW + i as f64), NOW);
    }
    assert_eq!(
        Ended::decode(&e.encode()).encode().lines().count(),
        MARKS_KEPT
    );
    assert!(!e.covers(&paid("k0", NOW - 1.0)));
    assert!(e.covers(&paid(&format!("k{}", MARKS_KEPT + 2), NOW)));
    assert!(!e.all_expired(NOW));
    assert!(e.all_expired(NOW + 2.0 * TTL));
}

#[test]
fn marks_of_two_backends_merge_once() {
    let mut a = Ended::default();
    a.add(mark(K1, NOW), NOW);
    let mut b = a.clone();
    b.add(mark(K2, NOW + 1.0), NOW);
    a.merge(b);
    assert_eq!(a.encode().lines().count(), 2);
}
