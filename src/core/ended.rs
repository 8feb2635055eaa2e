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

use crate::core::ascii::digits;
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
}

/// The marks of one scope, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ended {
    marks: Vec<Mark>,
}

impl Ended {
    /// Reads the stored text: one mark per line, `key since until`. A line that does not
    /// read so (edited by hand, another version) is passed over; the others still count.
    pub fn decode(text: &str) -> Ended {
        let marks = text
            .lines()
            .filter_map(|line| {
                let mut parts = line.split(' ');
                let key = parts.next().filter(|k| !k.is_empty())?;
                let since = digits(parts.next()?)? as f64;
                let until = digits(parts.next()?)? as f64;
                parts.next().is_none().then(|| Mark {
                    key: key.into(),
                    since,
                    until,
                })
            })
            .collect();
        Ended { marks }
    }

    /// The stored text.
    pub fn encode(&self) -> String {
        let mut o = String::new();
        for m in &self.marks {
            if !o.is_empty() {
                o.push('\n');
            }
            o.push_str(&m.key);
            o.push(' ');
            push_u64(&mut o, m.since as u64);
            o.push(' ');
            push_u64(&mut o, m.until as u64);
        }
        o
    }

    /// Adds the marks of `other` (another backend's) not here yet.
    pub fn merge(&mut self, other: Ended) {
        for m in other.marks {
            if !self.marks.contains(&m) {
                self.marks.push(m);
            }
        }
    }

    /// Adds `mark`, and drops the marks whose key has expired at `now_ms` and the oldest
    /// beyond [`MARKS_KEPT`].
    pub fn add(&mut self, mark: Mark, now_ms: f64) {
        self.marks.retain(|m| m.until > now_ms);
        self.marks.push(mark);
        let extra = self.marks.len().saturating_sub(MARKS_KEPT);
        self.marks.drain(..extra);
    }

    /// Whether some mark ends `rec` ([`Mark::covers`]).
    pub fn covers(&self, rec: &Record) -> bool {
        self.marks.iter().any(|m| m.covers(rec))
    }

    /// Whether every mark's key has expired at `now_ms` (nothing left to honour).
    pub fn all_expired(&self, now_ms: f64) -> bool {
        self.marks.iter().all(|m| m.until <= now_ms)
    }
}

#[cfg(test)]
#[path = "ended_tests.rs"]
mod tests;
