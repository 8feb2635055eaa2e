//! The marks of attempts ended by `finish()` and `reset()` (core::ended), as read back from
//! Web Storage, whatever another script or version left there.
//!
//! Properties: reading never panics; a mark's entry read beside any others ends its
//! attempt; it never ends another key's attempt; what a submit belongs to does not depend
//! on the order the entries are read in.

use idemkey::core::ended::{belongs, covers, Mark};
use idemkey::core::record::Record;

/// Reads `data` as the other stored entries and checks what one more mark makes of them.
pub fn check(data: &[u8]) {
    let (now, rest) = crate::clock_and_rest(data, 1_700_000_000_000.0);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let key = "11111111-1111-4111-8111-111111111111";
    let mark = Mark {
        key: key.into(),
        bound: true,
        until: now + 1.0,
    };
    let read = format!("{text}\n{}", mark.line());
    let ended = Record::new(key, "cart", now - 1.0, 60_000.0);
    assert!(
        covers(&read, &ended),
        "the mark added does not end its attempt"
    );
    let other = Record::new(
        "22222222-2222-4222-8222-222222222222",
        "cart",
        now,
        60_000.0,
    );
    assert_eq!(covers(&read, &other), covers(text, &other));
    let reversed: String = read.lines().rev().map(|l| format!("{l}\n")).collect();
    for rec in [Some(&ended), Some(&other), None] {
        assert_eq!(belongs(rec, &read, ""), belongs(rec, &reversed, ""));
    }
}
