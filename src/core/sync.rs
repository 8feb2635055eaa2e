//! What the tabs of one scope do with the record they share, decided without the browser:
//! what the tab that takes the scope's lock goes on from, whether another tab's copy beats
//! the one this tab shows, and the notices the tabs post each other.
//!
//! The rule behind all of it: only the tab holding the scope's lock changes the stored key
//! or state, and a key a tab made up at `open()` never replaces a record it may not have seen.

use crate::core::record::Record;
use crate::core::state::State;
use crate::prelude::*;

/// Where the record a tab shows came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// A key this tab made up (at `open()`, or by `reset()` or `finish()`), never stored:
    /// it must never replace a record the tab may not have seen.
    Made,
    /// Read from or written to the scope's store by this tab.
    Stored,
    /// Written to IndexedDB by this tab, which said it committed it (or read there again
    /// since): what a tab that reads the store finds of that attempt unless an end mark, a
    /// newer copy, the key's expiry or storage lost under the page says otherwise. A
    /// succeeded attempt's answer is given from the page's memory, after the same checks
    /// of Web Storage as one read from IndexedDB (see core::machine's `cached`).
    Committed,
    /// Another tab stored it and said so (its notice, or its localStorage write's `storage`
    /// event), often before this tab's localStorage has that tab's copy.
    Posted,
}

/// What the tab that has just taken the scope's lock goes on from.
#[derive(Debug, Clone, PartialEq)]
pub enum Current {
    /// The live record stored for the scope: every tab uses it.
    Stored(Record),
    /// A live record the store lacks: the Web Storage mirror's copy, or the one another
    /// tab posted and this tab shows ([`on_lock`]). Used, and moved into the store by the
    /// next write.
    Legacy(Record),
    /// Nothing live is stored and this tab's record was never stored (made at `open()` or
    /// by `reset()`): it becomes the scope's record.
    Mine,
    /// Nothing live is stored, and the record this tab shows expired, was ended, was
    /// stored with nothing sent under it (fresh), or gave way to what the stores hold: a
    /// new attempt with a new key.
    Fresh,
    /// The submit belongs to this attempt, ended since it was called (core::ended's
    /// `belongs`): its answer, its own key again where it has none yet and the page showed
    /// it at the call, or a refusal.
    Ended(Record),
    /// The submit belongs to an attempt ended since it was called whose record is gone:
    /// `outcome-unknown`; nothing is sent.
    Lost,
}

impl Current {
    /// Whether the record to go on from is not in the store yet.
    pub fn unstored(&self) -> bool {
        !matches!(self, Current::Stored(_))
    }
}

/// Decides [`Current`] at `now_ms` from the store's record (`stored`), the mirror's
/// (`mirror`), and what this tab shows (`shown`, from where `from`). `held`: IndexedDB
/// answered the read (so `stored` is its record, if any); else `stored` is localStorage's.
/// Records ended by a page are the caller's to leave out, `shown` included (`None`).
///
/// The mirror's copy the store missed is gone on from first, unless the record another tab
/// posted and this tab shows began after it: a tab that read the store late sent that
/// copy's earlier attempt again, and the shown one, which may have charged, is weighed
/// against the store's record instead.
///
/// Where nothing live is stored (the store's read failed, the origin's storage was
/// cleared, the store holds only an attempt a page ended) and the mirror holds no copy the
/// store missed, a record another tab posted and this tab shows, bound to a payload, is
/// gone on from, and so is one this tab read or stored where IndexedDB did not answer:
/// the notice reaches a tab before the other tab's localStorage write does, its key may
/// have charged, and no end retired it, so a new key could charge the cart a second time.
/// A live stored record is gone on from as always (it refuses another payload rather than
/// pay it), unless the record posted and shown was stored after it (an attempt begun
/// later, or the same one stored more times: [`began_after`]) and was not refused (a
/// failed attempt charged nothing): the store missed that tab's writes (they failed
/// there), or the store's read failed here and localStorage, read instead, has not had
/// them yet. This tab's own record is weighed so only where `stored` is localStorage's
/// (not `held`): there another tab that had not had this tab's copy yet may have written
/// over it; elsewhere its writes are in its own store and mirror, unless the origin's
/// storage was cleared under it. Where `stored` is IndexedDB's, it wins a tie of counts
/// against a posted copy of another attempt: the lock holder that stored it read the
/// count the other's tab had read, so that tab's write never reached IndexedDB. It died
/// after its localStorage copy (a pending record's is written first: [`may_lead`]), and
/// nothing was sent under that key; or IndexedDB refused the write and its try went out
/// all the same, and going on from IndexedDB's record sends no third key.
pub fn on_lock(
    stored: Option<Record>,
    held: bool,
    mirror: Option<Record>,
    shown: Option<&Record>,
    from: Shown,
    now_ms: f64,
) -> Current {
    let live = |r: &Record| !r.is_expired(now_ms);
    let stored = stored.filter(live);
    let shown = shown.filter(|s| live(s));
    // Not the mirror's copy of an attempt begun before the one another tab posted and this
    // tab shows: weighed against the store's record instead, as the posted one is.
    let later = |m: &Record| shown.is_some_and(|s| from == Shown::Posted && began_after(s, m));
    if let Some(m) = mirror.filter(|m| live(m) && store_missed(m, stored.as_ref()) && !later(m)) {
        return Current::Legacy(m);
    }
    if let Some(r) = stored {
        return match shown {
            // Another tab's record stored after this one (its IndexedDB writes failed, or
            // this tab's read did and localStorage, read instead, is late), or this tab's
            // own, which a tab that had not had it wrote over in localStorage: it may have
            // charged, so its key, never a new one.
            Some(s)
                if (from == Shown::Posted || !held && from != Shown::Made)
                    && s.state != State::Failed
                    && !(held && s.rev == r.rev)
                    && began_after(s, &r) =>
            {
                Current::Legacy(s.clone())
            }
            _ => Current::Stored(r),
        };
    }
    match (shown, from) {
        (Some(_), Shown::Made) => Current::Mine,
        // Only a record bound to a payload may have charged. One this tab read or stored
        // counts as posted where IndexedDB did not answer: localStorage, read instead, may
        // not have had it yet, or a late sweep deleted it there.
        (Some(s), f) if s.fingerprint.is_some() && (f == Shown::Posted || !held) => {
            Current::Legacy(s.clone())
        }
        _ => Current::Fresh,
    }
}

/// Whether the mirror's copy `m` holds what the store (holding `stored`) lacks: a write the
/// store refused, or a record it lost. The mirror is written once the store has committed
/// (a pending record's as its write is asked for, a submit's final answer just before it),
/// with the lock held until the store has it, so a late copy in another tab is only ever
/// older: the same key with a higher `rev`, or a later attempt ([`began_after`]), is news.
/// `rev` 0 marks a copy the store does not hold (written while it failed, or by a release
/// before it). With nothing stored, a copy with a `rev` was finished by a tab, unless its
/// outcome is unknown: a key that may have charged is kept rather than lost to a store that
/// was cleared.
pub fn store_missed(m: &Record, stored: Option<&Record>) -> bool {
    match stored {
        Some(s) if s.key == m.key => m.rev == 0 || m.rev > s.rev,
        Some(s) => began_after(m, s),
        None => m.rev == 0 || may_lead(m),
    }
}

/// Whether the mirror may have `rec`'s copy before the store has it (written as the
/// store's write is asked for): the next lock holder goes on from such a copy whatever
/// the store holds ([`store_missed`]), so a page that dies in between loses nothing. A
/// pending record's may; a fresh one's would pass for a record a tab finished, shown by
/// the next page and then replaced by a new key at its submit.
pub fn may_lead(rec: &Record) -> bool {
    rec.state == State::Pending
}

/// Whether another tab's stored record (`incoming`, from a notice or a `storage` event)
/// replaces what this tab shows (`shown`, from where `from`): always over a key that was
/// never stored; for the same key when it is as recent or more (`rev`); for another key
/// unless that attempt began earlier. Copies can arrive late and out of order; an older
/// one must not undo a newer.
pub fn supersedes(incoming: &Record, shown: &Record, from: Shown) -> bool {
    if from == Shown::Made {
        return true;
    }
    if incoming.key == shown.key {
        incoming.rev >= shown.rev
    } else {
        // A copy IndexedDB does not hold, of an attempt whose outcome is unknown, reaches
        // this tab late, and may be older than the counted attempt shown (a `storage` event
        // of a try the server has since refused): it replaces it only where the clock has
        // it begun later. At the lock, the lock holder's own copy still wins (`on_lock`).
        !began_after(shown, incoming)
            && (incoming.state != State::Pending
                || incoming.rev != 0
                || shown.rev == 0
                || incoming.created_at > shown.created_at)
    }
}

/// Whether copy `a` of a record is newer than copy `b` (two backends' copies): of the same
/// attempt, stored more times (`rev`), or as many times and changed later; of another
/// attempt, begun later.
pub fn newer(a: &Record, b: &Record) -> bool {
    if a.key == b.key {
        a.rev > b.rev || (a.rev == b.rev && a.updated_at > b.updated_at)
    } else {
        began_after(a, b)
    }
}

/// Whether attempt `a` began after attempt `b` (another key): the one stored later, by
/// `rev`, which a new attempt counts on from every record its lock holder read, and which
/// no clock set back or rounded can reorder. By `createdAt` only where `rev` cannot tell: a
/// copy IndexedDB does not hold (`rev` 0), or one count on both. Two attempts begun by tabs
/// that could not read each other's count on from what each read, often the same number:
/// the clock decides while both were stored as often, and once one of them was stored
/// again (its answer, say) the count takes it for the later one, whichever began first.
/// Before the clock: of two attempts of one payload, a paid one (succeeded) is taken for
/// the later over one whose outcome is unknown (pending), where the paid one was still
/// live, by the other's lifetime, when the other began. A tab that sees a paid attempt
/// of a payload answers a Pay of it and begins no other; a new attempt follows the paid
/// one's end (which retires it) or its expiry. So both are live only where the count
/// failed the tabs, and going on from the paid one sends nothing, where the other could
/// pay the payload again. Then, of two attempts one of which failed (the server refused
/// it: nothing was done), the other is taken for the later, whatever their payloads: going
/// on from the failed one begins yet another attempt under a new key, where the other's
/// key may have charged; going on from the other sends its key again (answered once) or
/// gives its answer. Last before the clock, of two attempts whose outcome is unknown, one a
/// copy IndexedDB does not hold (`rev` 0: written while it failed) and the other counted,
/// the copy is taken for the later: its key may have gone out, and a tab that had read it
/// live would have sent that key again rather than begin another attempt. So the counted
/// one was begun where the copy could not be read (another tab, the copy in its own tab's
/// sessionStorage), or after an end of the copy's attempt, whose mark then decides; going
/// on from it may send a key never sent, where the copy's tab keeps its own.
#[inline(never)]
pub fn began_after(a: &Record, b: &Record) -> bool {
    use State::{Failed, Pending, Succeeded};
    let (paid, other) = if a.state == Succeeded { (a, b) } else { (b, a) };
    let paid_first = matches!((paid.state, other.state), (Succeeded, Pending))
        && paid.fingerprint.is_some()
        && paid.fingerprint == other.fingerprint
        && other.created_at
            < paid
                .expires_at
                .min(paid.created_at + other.expires_at - other.created_at);
    if a.rev != 0 && b.rev != 0 && a.rev != b.rev {
        a.rev > b.rev
    } else if paid_first {
        a.state == Succeeded
    } else if (a.state == Failed) != (b.state == Failed) {
        b.state == Failed
    } else if a.state == Pending && b.state == Pending && (a.rev == 0) != (b.rev == 0) {
        a.rev == 0
    } else {
        a.created_at > b.created_at
    }
}

/// A message one tab of a scope posts to the others (BroadcastChannel text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice<'a> {
    /// The lock holder stored this record text.
    Stored(&'a str),
    /// A tab gave a key up (`reset()`, `finish()`): the mark's line (core::ended), or the
    /// bare key from an older release. The tab sending with it stops before its next try.
    /// (An older release also posted `R` and the key when it removed a finished record;
    /// that text reads as nothing now: the mark says it all.)
    Abandon(&'a str),
}

impl<'a> Notice<'a> {
    /// The posted text: one tag letter, then the record text or key.
    pub fn encode(&self) -> String {
        let (tag, rest) = match self {
            Notice::Stored(t) => ('S', t),
            Notice::Abandon(k) => ('A', k),
        };
        let mut s = String::with_capacity(1 + rest.len());
        s.push(tag);
        s.push_str(rest);
        s
    }

    /// Reads a posted text; `None` for anything else (another script on the channel).
    pub fn parse(text: &'a str) -> Option<Notice<'a>> {
        let rest = text.get(1..).filter(|r| !r.is_empty())?;
        Some(match *text.as_bytes().first()? {
            b'S' => Notice::Stored(rest),
            b'A' => Notice::Abandon(rest),
            _ => return None,
        })
    }
}

#[cfg(test)]
#[path = "sync_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "sync_posted_tests.rs"]
mod posted_tests;

#[cfg(test)]
#[path = "sync_own_tests.rs"]
mod own_tests;
