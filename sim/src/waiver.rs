//! The limits the user docs admit, as the checker's only way to let a property's violation
//! pass: each is named, bounded by what the docs promise, counted in the run's summary, and
//! tied to the sentence of README.md or docs/ that admits it ([`Waiver::doc`]; a test of
//! the crate finds each sentence in its file). A violation no waiver explains, or one whose
//! waiver is out of its bound, fails the run; a mutation whose violations are only ever
//! waived is not caught.

use crate::property::Property;

/// The longest a tab may take to hear of a `finish()` or `reset()` made in another tab, ms:
/// the docs admit the few milliseconds a browser takes to hand a localStorage write over,
/// and name this bound ("the simulator plays up to 400 ms").
pub const MARK_LAG_MS: f64 = 400.0;

/// A limit the docs admit to a user.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Waiver {
    /// The key in use had expired by the page's clock (`past_ms` past its `expiresAt`):
    /// the attempt may go on under a new key, and be charged under it.
    KeyExpired {
        /// How far past the key's expiry the page's clock was, ms (never negative).
        past_ms: f64,
    },
    /// The server answered the key in use with a final failure (it charged nothing): the
    /// next submit starts a new attempt with a new key.
    FinalFailure,
    /// A tab had not heard yet of the `finish()` or `reset()` made elsewhere `lag_ms`
    /// before (the mark not yet in its localStorage): it may go on with the attempt ended.
    MarkNotHeard {
        /// How long after the call, ms (at most [`MARK_LAG_MS`]).
        lag_ms: f64,
    },
    /// Without Web Locks, each tab's record and key are its own: another tab's key for the
    /// same order, and its charge. `other_tab`: the two keys were sent from two tabs.
    OwnTab {
        /// The key before was sent from another tab (a tab's own keys are held to one).
        other_tab: bool,
    },
    /// The submit's own tab was frozen or its timers ran late: its deadline ends when the
    /// browser lets its timer fire.
    TabSlowed,
    /// The record of the key before, or of the page that sent the key after, had fallen to
    /// its tab's sessionStorage or its page's memory (no Web Locks, or IndexedDB failed
    /// there, and Web Storage refused): another tab has its own key, and a refresh of a page
    /// whose record was in memory loses it.
    FellBack {
        /// The record was its tab's or page's own (not in IndexedDB nor localStorage).
        own: bool,
        /// The key after was sent from another tab, or, the record being in page memory,
        /// from a later page of the tab.
        elsewhere: bool,
    },
    /// Two keys of the order were bound by Pays in two tabs `lag_ms` apart, IndexedDB
    /// failed in one of them: its record was in localStorage alone, which the other tab
    /// read late, or replaced. Never for a page that had shown the key before (the
    /// checker's `on_send`).
    Unordered {
        /// How long after the one key was bound to the order's payload the other was, each
        /// when a page first showed it bound, ms (at most [`MARK_LAG_MS`], the longest
        /// localStorage lag the simulator plays).
        lag_ms: f64,
    },
    /// The `finish()` or `reset()` returned `false`: Web Storage refused its mark, and the
    /// end holds in its page only.
    EndNotDurable,
    /// The record of the key before lived in IndexedDB alone, its page's Web Storage copy
    /// in page memory (both areas refused it), and IndexedDB failed in a later page of the
    /// same tab, which sent the key after: nothing it could read held the key before.
    BothFailed {
        /// The key before's page kept its copy in page memory.
        memory: bool,
        /// The key after was sent from a later page of the same tab, whose IndexedDB failed.
        later_page: bool,
    },
    /// A try that left its page before its key expired (by that page's clock) reached the
    /// server after it forgot the key: a try on the wire is not called back.
    OnTheWire {
        /// How long before the key's expiry the try left, ms (never negative).
        before_ms: f64,
    },
    /// The record of the key before lived in localStorage alone (IndexedDB had failed in
    /// the page that wrote it there, when it wrote it), and a page of another tab, whose
    /// view of localStorage had not had it, wrote another attempt's record over it there,
    /// however long after: the world saw the write (the simulator's `Env::replaced`). A
    /// later Pay of the order then goes on from what is left.
    Replaced {
        /// The page that sent the key after neither sent the key before nor showed it bound
        /// to a payload: nothing it could read held it. (A page that did holds the key
        /// before in its own memory, and is held to it.)
        unseen: bool,
    },
    /// The record of the key before lived in localStorage alone (as for
    /// [`Waiver::Replaced`]), and a page whose view of localStorage was late removed it
    /// there: its `open()`'s sweep of the expired record it still read in its place. The
    /// world saw the removal (the simulator's `Env::replaced`).
    Swept {
        /// As for [`Waiver::Replaced`].
        unseen: bool,
    },
    /// A submit called in a page that lists the scope's marks only where the scope's flag
    /// is, and could not (it had listed, read or written no mark of the scope, and the
    /// flag was out of its view of localStorage: a script removed it, and no page wrote it
    /// again nor found a mark by its own entry there where it could have), was answered by an attempt given up before the call, whose mark was in the
    /// page's storage all the same: it counted that mark as not heard yet, and belongs to
    /// that attempt as a submit called before the end does.
    FlagGone {
        /// The page had listed, read or written no mark of the scope by the call.
        unlisted: bool,
        /// The flag was out of its view then, a script's removal the last change to it, and
        /// no page owed it back (sim/src/ends.rs).
        flag_removed: bool,
    },
    /// The same, for a final submit of another payload, localStorage full as well: no page
    /// could write the flag again, and the submit rejected `outcome-unknown` (reason
    /// `abandoned`, nothing sent), IndexedDB holding the ended attempt's record: until the
    /// ended attempt's key expires.
    FlagStuck {
        /// As for [`Waiver::FlagGone`], both conditions, at the call.
        flag_gone: bool,
        /// localStorage refused writes (its quota) at the call.
        full: bool,
        /// How long before the ended attempt's key expired the call was, ms, by the page's
        /// clock (never negative: the docs admit it until then).
        left_ms: f64,
    },
}

/// Every waiver's name, in the order of [`Waiver::index`] (the summary's counts).
pub const NAMES: [&str; 14] = [
    "key-expired",
    "final-failure",
    "mark-not-heard",
    "own-tab",
    "tab-slowed",
    "fell-back",
    "end-not-durable",
    "unordered",
    "on-the-wire",
    "both-failed",
    "replaced",
    "swept",
    "flag-gone",
    "flag-stuck",
];

/// One of each waiver, to list their sentences.
pub const ALL: [Waiver; 14] = [
    Waiver::KeyExpired { past_ms: 0.0 },
    Waiver::FinalFailure,
    Waiver::MarkNotHeard { lag_ms: 0.0 },
    Waiver::OwnTab { other_tab: true },
    Waiver::TabSlowed,
    Waiver::FellBack {
        own: true,
        elsewhere: true,
    },
    Waiver::EndNotDurable,
    Waiver::Unordered { lag_ms: 0.0 },
    Waiver::OnTheWire { before_ms: 0.0 },
    Waiver::BothFailed {
        memory: true,
        later_page: true,
    },
    Waiver::Replaced { unseen: true },
    Waiver::Swept { unseen: true },
    Waiver::FlagGone {
        unlisted: true,
        flag_removed: true,
    },
    Waiver::FlagStuck {
        flag_gone: true,
        full: true,
        left_ms: 0.0,
    },
];

impl Waiver {
    /// Its number in [`NAMES`] and in the summary's counts.
    pub fn index(self) -> usize {
        match self {
            Waiver::KeyExpired { .. } => 0,
            Waiver::FinalFailure => 1,
            Waiver::MarkNotHeard { .. } => 2,
            Waiver::OwnTab { .. } => 3,
            Waiver::TabSlowed => 4,
            Waiver::FellBack { .. } => 5,
            Waiver::EndNotDurable => 6,
            Waiver::Unordered { .. } => 7,
            Waiver::OnTheWire { .. } => 8,
            Waiver::BothFailed { .. } => 9,
            Waiver::Replaced { .. } => 10,
            Waiver::Swept { .. } => 11,
            Waiver::FlagGone { .. } => 12,
            Waiver::FlagStuck { .. } => 13,
        }
    }

    /// Its name as printed.
    pub fn name(self) -> &'static str {
        NAMES[self.index()]
    }

    /// Whether it may let a violation of `p` pass.
    pub fn waives(self, p: Property) -> bool {
        use Property::*;
        match self {
            Waiver::KeyExpired { .. } => {
                matches!(p, OnePayloadOneKey | UnknownKept | OneCharge) || p == OneViewPerPage
            }
            Waiver::FinalFailure => matches!(p, OnePayloadOneKey | UnknownKept),
            Waiver::MarkNotHeard { .. } => matches!(
                p,
                OnePayloadOneKey
                    | FinishDurable
                    | ResetDurable
                    | FinishedStaysFinished
                    | BfcacheGaveUp
            ),
            Waiver::OwnTab { .. } => matches!(p, OnePayloadOneKey | UnknownKept | OneCharge),
            Waiver::TabSlowed => p == WaitBounded,
            Waiver::FellBack { .. } => matches!(p, OnePayloadOneKey | UnknownKept | OneCharge),
            Waiver::Unordered { .. } => matches!(p, OnePayloadOneKey | UnknownKept | OneCharge),
            Waiver::BothFailed { .. } => matches!(p, OnePayloadOneKey | UnknownKept | OneCharge),
            Waiver::Replaced { .. } | Waiver::Swept { .. } => {
                matches!(p, OnePayloadOneKey | UnknownKept | OneCharge)
            }
            Waiver::OnTheWire { .. } => p == ForgottenNotResent,
            Waiver::FlagGone { .. } => matches!(p, FinishDurable | ResetDurable),
            Waiver::FlagStuck { .. } => p == EverySubmitSettles,
            Waiver::EndNotDurable => matches!(
                p,
                FinishDurable
                    | ResetDurable
                    | FinishedStaysFinished
                    | BfcacheGaveUp
                    | OnePayloadOneKey
                    | UnknownKept
                    | OneCharge
            ),
        }
    }

    /// Whether it is within what the docs admit.
    pub fn within_bound(self) -> bool {
        match self {
            Waiver::KeyExpired { past_ms } => past_ms >= 0.0,
            Waiver::FinalFailure | Waiver::TabSlowed | Waiver::EndNotDurable => true,
            Waiver::MarkNotHeard { lag_ms } | Waiver::Unordered { lag_ms } => {
                (0.0..=MARK_LAG_MS).contains(&lag_ms)
            }
            Waiver::OwnTab { other_tab } => other_tab,
            Waiver::OnTheWire { before_ms } => before_ms >= 0.0,
            Waiver::FellBack { own, elsewhere } => own && elsewhere,
            Waiver::BothFailed { memory, later_page } => memory && later_page,
            Waiver::Replaced { unseen } | Waiver::Swept { unseen } => unseen,
            Waiver::FlagGone {
                unlisted,
                flag_removed,
            } => unlisted && flag_removed,
            Waiver::FlagStuck {
                flag_gone,
                full,
                left_ms,
            } => flag_gone && full && left_ms >= 0.0,
        }
    }

    /// The file of README.md or docs/ and the sentence in it (quoted word for word, but for
    /// line breaks) that admits the limit to a user.
    pub fn doc(self) -> (&'static str, &'static str) {
        match self {
            Waiver::KeyExpired { .. } => (
                "docs/guide.md",
                "a key older than this is never reused (also one stored by a page with a \
                 longer `ttlSeconds`)",
            ),
            Waiver::FinalFailure => (
                "docs/guide.md",
                "After `failed` (the server said no, so nothing was done), the next \
                 `submit()`, of any payload, starts a new attempt with a new key.",
            ),
            Waiver::MarkNotHeard { .. } => (
                "docs/tabs-and-storage.md",
                "Before that, in the few milliseconds a browser takes to hand one tab's \
                 localStorage write to another (the simulator plays up to 400 ms, with every \
                 channel notice lost), a Pay pressed in a tab that has not heard of it counts \
                 as pressed before the end: it is answered by the attempt that ended, and a \
                 try it sent before the mark reached it reports what it did.",
            ),
            Waiver::OwnTab { .. } => (
                "docs/tabs-and-storage.md",
                "Tabs are not coordinated: a second tab has its own record and its own key, \
                 and paying in both may charge twice, as without idemkey.",
            ),
            Waiver::TabSlowed => (
                "docs/guide.md",
                "so does a wait the browser ends after the deadline or after the key's \
                 `ttlSeconds` (a background tab's timers run late, a frozen tab's not at \
                 all): no try is sent then",
            ),
            Waiver::FellBack { .. } => (
                "docs/tabs-and-storage.md",
                "Otherwise each step down protects less: `session` keeps the key across \
                 refreshes of that tab only (another tab has its own key), and `memory` loses \
                 it on refresh.",
            ),
            Waiver::Unordered { .. } => (
                "docs/tabs-and-storage.md",
                "if it saw none at all, its own: a Pay pressed in two tabs (or in a page and the \
                 page restored after it) within that lag may then charge the order twice, once \
                 under each key, or, where one tab's write replaced the other's record that \
                 only localStorage held, once more under a new key at a later Pay of that \
                 order.",
            ),
            Waiver::OnTheWire { .. } => (
                "docs/guide.md",
                "a try of it still on the wire as it expires (sent by a page that then left, or \
                 before the clock jumped on) is not called back, so the order paid again under \
                 the next key may be charged under both",
            ),
            Waiver::BothFailed { .. } => (
                "docs/tabs-and-storage.md",
                "Where both Web Storage areas refused the copy, IndexedDB alone holds the \
                 record across a refresh: if IndexedDB then fails a later page of the same tab \
                 too, nothing that page can read holds the key, and an order paid under it may \
                 be paid again under a new key and charged twice.",
            ),
            Waiver::Replaced { .. } => (
                "docs/tabs-and-storage.md",
                "The record of a tab without IndexedDB lives in localStorage alone, and another \
                 tab's write of another attempt can replace it there even later: a later Pay of \
                 that order may then go out under a new key, and charge it again if it was paid \
                 under the first.",
            ),
            Waiver::Swept { .. } => (
                "docs/tabs-and-storage.md",
                "A page's first `open()` deletes the expired records it reads, and its view of \
                 localStorage may be late: where a tab without IndexedDB stored a record in \
                 place of an expired one there, a page that still read the expired one \
                 deletes the new one, and a later Pay of that order may then go out under a \
                 new key, and charge it again if it was paid under the first.",
            ),
            Waiver::FlagGone { .. } => (
                "docs/tabs-and-storage.md",
                "In a page that has done none of these (a mark that reached its storage after \
                 its first `open()`, or one in another backend than the sweep's), a submit \
                 counts a mark as not heard yet until a page writes the flag again (IndexedDB \
                 holds the ended attempt's record while the key the page shows and the copies \
                 in its Web Storage are of another attempt, say), even where the mark is in its storage: such a \
                 submit belongs to the attempt that ended, as one called before the end does, \
                 and may be answered by it, or rejects `outcome-unknown` (reason `abandoned`) \
                 where it has no answer for that payload.",
            ),
            Waiver::FlagStuck { .. } => (
                "docs/tabs-and-storage.md",
                "Where localStorage is full as well, no page can write the flag again there, \
                 and every such page's Pay of that order rejects so until the ended attempt's \
                 key expires.",
            ),
            Waiver::EndNotDurable => (
                "docs/tabs-and-storage.md",
                "the end holds in this page, but a later page or another tab may take the \
                 attempt for the live one and answer the next order from it, or pay the next \
                 order under the old key while this page pays it under a new one.",
            ),
        }
    }
}
