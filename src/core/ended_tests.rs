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
    // Never bound (fresh, shown by open()).
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
    let text = with(
        &with("", &mark(K1, NOW), NOW),
        &mark(K2, NOW + 3.0),
        NOW + 3.0,
    );
    assert_eq!(text.lines().count(), 2);
    assert!(covers(&text, &paid(K1, NOW)));
    assert!(covers(&text, &paid(K2, NOW)));
    assert_eq!(
        Mark::decode(text.lines().next().unwrap()),
        Some(mark(K2, NOW + 3.0))
    );
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
        assert!(
            covers(&format!("{bad}\n{good}"), &paid(K1, NOW - 1.0)),
            "{bad:?}"
        );
        assert!(
            covers(&format!("{good}\n{bad}"), &paid(K1, NOW - 1.0)),
            "{bad:?}"
        );
        assert!(!covers(bad, &paid(K1, NOW - 1.0)), "{bad:?}");
        // Dropped at the next write.
        assert_eq!(with(bad, &mark(K2, NOW), NOW).lines().count(), 1, "{bad:?}");
    }
}

#[test]
fn expired_marks_go_and_only_the_last_few_are_kept() {
    let text = with("", &mark(K1, NOW), NOW);
    // K1 expired: nothing can still hold it as live, and its mark is dropped.
    let text = with(&text, &mark(K2, NOW + TTL), NOW + TTL);
    assert!(!covers(&text, &paid(K1, NOW - 1.0)));
    assert!(covers(&text, &paid(K2, NOW)));
    let mut text = String::new();
    for i in 0..(MARKS_KEPT + 3) {
        text = with(&text, &mark(&format!("k{i}"), NOW + i as f64), NOW);
    }
    assert_eq!(text.lines().count(), MARKS_KEPT);
    assert!(!covers(&text, &paid("k0", NOW - 1.0)));
    assert!(covers(&text, &paid(&format!("k{}", MARKS_KEPT + 2), NOW)));
    assert!(!all_expired(&text, NOW));
    assert!(all_expired(&text, NOW + 2.0 * TTL));
}

#[test]
fn a_mark_is_held_only_by_a_line_that_is_that_mark() {
    let m = mark(K1, NOW);
    let stored = with("", &m, NOW);
    assert!(holds(&stored, &m));
    assert!(holds(&with(&stored, &mark(K2, NOW + 1.0), NOW), &m));
    // Another time or key is another mark, and a longer line is not this one.
    assert!(!holds(&stored, &mark(K1, NOW + 1.0)));
    assert!(!holds(&stored, &mark(K2, NOW)));
    let longer = format!("{} 1", m.line());
    assert!(!holds(&longer, &m) && longer.contains(&m.line()));
    assert!(!holds("", &m));
}
