//! The attempts a page ended with `finish()` or `reset()`, as every later reader must see
//! them: one mark per key given up, written to Web Storage before the call returns, so a
//! page that navigates, reloads or closes at once leaves its decision behind even when the
//! clean-up with the scope's lock never runs (or IndexedDB refuses it).
//!
//! The one rule ([`Mark::covers`]): a record of the key given up whose payload was bound at
//! or before the mark was made is that ended attempt, and no reader shows it, answers from
//! it or sends its key again. A record of the same key bound later is the next order's: a
//! tab that had not heard of the mark yet paid it under that key, and the charge it made is
//! shown, not hidden.
//!
//! The stored text is one mark per line, `key since until`, newest first; it is read as
//! text, line by line, and a line that does not read so (edited by hand, another version)
//! is passed over while the others still count.

use crate::core::ascii::{digits, rsplit_byte};
use crate::core::json::push_u64;
use crate::core::record::Record;
use crate::prelude::*;

/// How many marks a scope keeps: one record is stored per scope, so only the keys of the
/// last few attempts can still be found anywhere; a page ends one attempt per order.
pub const MARKS_KEPT: usize = 8;

/// One attempt given up.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// The key given up.
    pub key: String,
    /// When it was given up (ms since epoch).
    pub since: f64,
    /// When the key expires anyway (ms since epoch): the mark is needed until then.
    pub until: f64,
}

impl Mark {
    /// Whether `rec` is the attempt this mark ended: its key, with its payload bound
    /// (`submittedAt`, 0 when none was) at or before the mark. A page that calls `finish()`
    /// in the turn it submits ends that order too.
    pub fn covers(&self, rec: &Record) -> bool {
        rec.key == self.key && rec.submitted_at <= self.since
    }

    /// One stored line; `None` for anything else.
    // Not `contains(&b' ')`: that links the slice `memchr`.
    #[allow(clippy::manual_contains)]
    pub fn decode(line: &str) -> Option<Mark> {
        let (head, until) = rsplit_byte(line, b' ')?;
        let (key, since) = rsplit_byte(head, b' ')?;
        if key.is_empty() || key.as_bytes().iter().any(|&b| b == b' ') {
            return None;
        }
        Some(Mark {
            key: key.into(),
            since: digits(since)? as f64,
            until: digits(until)? as f64,
        })
    }

    /// The stored line, which the notice of a `reset()` or `finish()` carries too.
    pub fn line(&self) -> String {
        let mut out = String::new();
        self.push_line(&mut out);
        out
    }

    fn push_line(&self, out: &mut String) {
        out.push_str(&self.key);
        out.push(' ');
        push_u64(out, self.since as u64);
        out.push(' ');
        push_u64(out, self.until as u64);
    }
}

/// The first line of `text` and what follows it.
fn first_line(text: &str) -> (&str, &str) {
    match text.as_bytes().iter().position(|&b| b == b'\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    }
}

/// The readable marks of the stored `text`, newest first.
fn marks(mut text: &str) -> impl Iterator<Item = Mark> + '_ {
    core::iter::from_fn(move || {
        while !text.is_empty() {
            let (line, rest) = first_line(text);
            text = rest;
            if let Some(m) = Mark::decode(line) {
                return Some(m);
            }
        }
        None
    })
}

/// Whether some mark of the stored `text` ends `rec` ([`Mark::covers`]).
pub fn covers(text: &str, rec: &Record) -> bool {
    marks(text).any(|m| m.covers(rec))
}

/// Whether the stored `text` holds `mark` already (line by line: a substring search would
/// link a searcher of its own, and could match inside a longer line).
pub fn holds(text: &str, mark: &Mark) -> bool {
    marks(text).any(|m| m == *mark)
}

/// The stored text with `mark` added first, the marks whose key expired by `now_ms` (and
/// unreadable lines) dropped, and no more than [`MARKS_KEPT`] kept.
pub fn with(text: &str, mark: &Mark, now_ms: f64) -> String {
    let mut out = String::new();
    mark.push_line(&mut out);
    for m in marks(text)
        .filter(|m| m.until > now_ms)
        .take(MARKS_KEPT - 1)
    {
        out.push('\n');
        m.push_line(&mut out);
    }
    out
}

/// Whether every mark of the stored `text` names a key expired at `now_ms` (nothing left
/// to honour).
pub fn all_expired(text: &str, now_ms: f64) -> bool {
    marks(text).all(|m| m.until <= now_ms)
}

#[cfg(test)]
#[path = "ended_tests.rs"]
mod tests;
