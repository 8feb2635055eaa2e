//! The marks of attempts ended by `finish()` and `reset()` (core::ended), as read back from
//! Web Storage, whatever another script or version left there.
//!
//! Properties: reading never panics; a mark added is read back and ends its attempt; what
//! is written keeps no unreadable line and no more than [`MARKS_KEPT`] marks; a mark never
//! ends another key's attempt.

use idemkey::core::ended::{covers, with, Mark, MARKS_KEPT};
use idemkey::core::record::Record;

/// Reads `data` as stored marks and checks what adding one more makes of them.
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
    let written = with(text, &mark, now);
    let lines: Vec<&str> = written.lines().collect();
    assert!(lines.len() <= MARKS_KEPT, "{} marks kept", lines.len());
    assert!(
        lines.iter().all(|l| Mark::decode(l).is_some()),
        "an unreadable line was kept: {written:?}"
    );
    let ended = Record::new(key, "cart", now - 1.0, 60_000.0);
    assert!(
        covers(&written, &ended),
        "the mark added does not end its attempt"
    );
    let other = Record::new(
        "22222222-2222-4222-8222-222222222222",
        "cart",
        now,
        60_000.0,
    );
    let named = lines
        .iter()
        .any(|l| l.starts_with("22222222-2222-4222-8222-222222222222 "));
    assert_eq!(covers(&written, &other), named && covers(text, &other));
}
