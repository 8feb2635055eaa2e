//! The attempts a page ended with `finish()` or `reset()`, as every later reader must see
//! them: one mark per key given up, written to Web Storage before the call returns, so a
//! page that navigates, reloads or closes at once leaves its decision behind. The ended
//! attempt's record is not removed: it keeps the attempt's answer for the submits that
//! belong to it (below), until its key expires or the next attempt's record replaces it.
//!
//! What a mark ends ([`Mark::covers`]): the attempt as the page that ended it saw it. Where
//! that page saw the key bound to a payload, every record of the key; where it saw the key
//! fresh, only a record still fresh: a tab that had not heard of the mark and bound the key
//! to a payload began an attempt the page never saw, and the charge it made is shown, not
//! hidden.
//!
//! Which came first, a `submit()` or an end ([`belongs`]), is decided by what the page had
//! heard when `submit()` was called: the marks in its Web Storage then. No clock is read,
//! so a clock set back or rounded, or two calls in one millisecond, cannot reorder them. A
//! submit called before an end it had not heard of belongs to the attempt that end ended:
//! it resolves with that attempt's answer, goes on with that attempt under its own key
//! where it has no answer yet and the page showed it at the call, or rejects, and never
//! sends a new key.
//!
//! Each mark is a Web Storage entry of its own, `<ns>:ended:<scope>:<key>` holding the line
//! `key bound until` (`bound` is `1` or `0`): two tabs that end attempts before either has
//! the other's write (localStorage reaches other tabs late) each write their own entry, so
//! neither end is lost. The marks are read as one text, a line per entry in no order; a line
//! that does not read so (edited by hand, another version) is passed over while the others
//! still count. A key's entry is never weakened: once a page ended the key bound, a page
//! that ended it where it saw it fresh writes it bound too.
//!
//! Web Storage finds a scope's entries only by going through every key of the origin. So
//! each end first writes the scope's flag, `<ns>:ends:<scope>` (holding the mark's line,
//! never read back), in the backend that then takes the mark, and a page lists a scope's
//! marks only in a backend where the flag is: one tab's writes reach another in the order
//! made, so a page that has a mark has its flag. The sweep deletes a flag once no mark of
//! its scope is left beside it and the end it was last written for has expired (core::sweep's
//! `flag_due`): another page may list the flag before the mark written after it.

use crate::core::ascii::{digits, rsplit_byte};
use crate::core::json::push_u64;
use crate::core::record::Record;
use crate::prelude::*;

/// One attempt given up.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// The key given up.
    pub key: String,
    /// Whether the page that gave it up saw it bound to a payload (something may have been
    /// sent under it).
    pub bound: bool,
    /// When the key expires anyway (ms since epoch): the mark is needed until then.
    pub until: f64,
}

impl Mark {
    /// Whether `rec` is the attempt this mark ended: its key, bound to a payload only if
    /// the page that ended it saw it bound.
    pub fn covers(&self, rec: &Record) -> bool {
        rec.key == self.key && (self.bound || rec.fingerprint.is_none())
    }

    /// One stored line; `None` for anything else.
    // Not `contains(&b' ')`: that links the slice `memchr`.
    #[allow(clippy::manual_contains)]
    pub fn decode(line: &str) -> Option<Mark> {
        let (head, until) = rsplit_byte(line, b' ')?;
        let (key, bound) = rsplit_byte(head, b' ')?;
        if key.is_empty() || key.as_bytes().iter().any(|&b| b == b' ') {
            return None;
        }
        Some(Mark {
            key: key.into(),
            bound: digits(bound)? != 0,
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
        out.push_str(if self.bound { " 1 " } else { " 0 " });
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

/// The readable marks of the stored `text`.
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

/// Whether a mark of the stored `text` ends `key` where a page saw it bound.
pub fn bound(text: &str, key: &str) -> bool {
    marks(text).any(|m| m.key == key && m.bound)
}

/// Whether the stored `text` names `key` as given up: a page that had heard so when it
/// called `submit()` called it after the end.
pub fn names(text: &str, key: &str) -> bool {
    marks(text).any(|m| m.key == key)
}

/// What a `submit()` called when the page had heard of the marks in `heard` meets, once it
/// holds the scope's lock and finds `rec` stored and the marks `text`.
#[derive(Debug, Clone, PartialEq)]
pub enum Belongs {
    /// No end it had not heard of touches it: the usual plan, with ended attempts dead.
    Live,
    /// It belongs to the attempt of `rec`, ended since it was called: it resolves with that
    /// attempt's answer, or rejects, and sends nothing.
    Ended,
    /// It belongs to an attempt ended since it was called whose record is gone (replaced by
    /// a later attempt's): it rejects `outcome-unknown` and sends nothing.
    Lost,
}

/// The one rule of the ends a submit had not heard of when it was called (the marks not in
/// `heard`), in whatever order they are read. An end of an attempt that may have been paid
/// (bound) other than the stored `rec`'s is taken for the end of the attempt the submit was
/// called in, whose record a later attempt's replaced (a record is replaced only once its
/// attempt has ended): its answer is lost ([`Belongs::Lost`]), even where an end of `rec`'s
/// attempt is among them too, or the other end is an older one the page heard of late; the
/// submit then rejects rather than guess which attempt it was called in. Otherwise an end
/// of `rec`'s attempt, bound, is it: the record holds the answer ([`Belongs::Ended`]). An
/// end of a key the page saw fresh, with nothing bound under it, passes the submit on.
pub fn belongs(rec: Option<&Record>, text: &str, heard: &str) -> Belongs {
    let mut found = Belongs::Live;
    for m in marks(text).filter(|m| !names(heard, &m.key)) {
        match rec {
            Some(r) if m.covers(r) && r.fingerprint.is_some() => found = Belongs::Ended,
            Some(r) if m.covers(r) => {}
            _ if m.bound => return Belongs::Lost,
            _ => {}
        }
    }
    found
}

/// Whether every mark of the stored `text` names a key expired at `now_ms` (nothing left
/// to honour).
pub fn all_expired(text: &str, now_ms: f64) -> bool {
    marks(text).all(|m| m.until <= now_ms)
}

#[cfg(test)]
#[path = "ended_tests.rs"]
mod tests;
