//! The replaced waiver holds a record's replacement against when the key after first left:
//! a record replaced only after the next key went out did not make that key, and excuses
//! none of its charges.

use idemkey_sim::check::{Checker, From, Property};
use idemkey_sim::waiver::Waiver;

/// A try of `page` in `tab` at `at`, of a key bound then; `unordered`: IndexedDB failed in
/// the page.
fn from(tab: usize, page: usize, unordered: bool, at: f64) -> From {
    From {
        tab,
        page,
        memory: false,
        own: false,
        unordered,
        fell: false,
        restored: false,
        at,
        bound: at,
    }
}

/// Order 0 paid under `k1` from tab 0, whose IndexedDB failed (its record in localStorage
/// alone), then, 10 s later, from tab 1, which had not heard `k1` was given up, under `k2`
/// (mark-not-heard: a second key, no second charge); `k1`'s record is replaced at
/// `replaced_at`, and `k2` is charged at 20.1 s.
fn run(replaced_at: f64) -> Checker {
    let mut c = Checker::focused(None, true);
    let expires = (2e12, 1e12);
    let never = |_: &str| false;
    c.on_send(0, "k1", from(0, 0, true, 100.0), expires, never, never);
    c.on_charge(0, "k1", 1e12);
    c.on_unheard(0, 100.0);
    c.on_send(0, "k2", from(1, 1, false, 10_000.0), expires, never, never);
    assert!(c.violation.is_none(), "{:?}", c.violation);
    assert_eq!(c.waived[Waiver::MarkNotHeard { lag_ms: 0.0 }.index()], 1);
    c.replaced.insert("k1".into(), replaced_at);
    c.on_charge(0, "k2", 1e12);
    c
}

#[test]
fn a_record_replaced_after_the_next_key_left_excuses_no_second_charge() {
    let c = run(20_000.0);
    let v = c.violation.as_ref().map(|(p, _)| *p);
    assert_eq!(v, Some(Property::OneCharge), "{:?}", c.violation);
    assert_eq!(c.waived[Waiver::Replaced { unseen: true }.index()], 0);
}

#[test]
fn a_record_replaced_before_the_next_key_left_excuses_it() {
    let c = run(5_000.0);
    assert!(c.violation.is_none(), "{:?}", c.violation);
    assert_eq!(c.waived[Waiver::Replaced { unseen: true }.index()], 1);
}
