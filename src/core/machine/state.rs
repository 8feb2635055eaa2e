//! A scope's state, in one place: the record shown, the lock, the submit sequence in
//! flight, and the jobs waiting for the lock with where each stands. The files beside it
//! hold what the machine does with it.

use alloc::rc::Rc;

use super::host::Host;
use super::io::{Answer, Command, NoAnswer, Wake};
use super::mirror::Store;
use crate::core::options::Options;
use crate::core::record::Record;
use crate::core::sync::Shown;
use crate::error::Error;
use crate::prelude::*;

/// What `submit()` meets: the sequence whose promise it returns, or its refusal.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// A sequence of the same payload is in flight: its number (the same promise).
    Joined(u32),
    /// A new sequence, numbered so; [`Command::Settle`] settles it.
    Started(u32),
    /// Refused at once (another payload is in flight).
    Refused(Error),
}

/// The page's last submit sequence (or the one before it): where it settled
/// `outcome-unknown`, or has not settled yet (another tab's end stopped it before its next
/// try), the next submit of its payload goes on in the attempt it was called in, as what
/// the page had heard then.
pub(super) struct Resume {
    /// Its number.
    pub(super) no: u32,
    /// The fingerprint of its payload.
    pub(super) fp: String,
    /// The marks of ended attempts the page had heard of when it was called.
    pub(super) heard: String,
    /// It has no answer: it settled `outcome-unknown`, or has not settled.
    pub(super) unknown: bool,
    /// The key the page showed as it was called (or as the submit it resumes was), then the
    /// key its last try went out under: an attempt ended since then with no answer yet is
    /// gone on with under its key only if it is that one (core::machine's `submit_plan`).
    pub(super) key: String,
}

/// The submit sequence `submit()` joins while it runs.
pub(super) struct Flight {
    /// Its number.
    pub(super) no: u32,
    /// The fingerprint of its payload.
    pub(super) fp: String,
}

/// One scope's state in one page, and the work under way for it.
pub struct Scope<H: Host> {
    pub(super) host: H,
    /// The options of the scope's first `Checkout`: its scope, namespace, storage and
    /// `ttlSeconds` are the record's (each `Checkout` sends with its own).
    pub(super) opts: Rc<Options>,
    /// The record's storage key.
    pub(super) rec_key: String,
    /// The Web Storage (or memory) store: the mirror `open()` and the getters read, and
    /// the record's store itself where IndexedDB is not used.
    pub(super) store: Store,
    /// Whether IndexedDB holds the record (`storage: "local"` until it fails).
    pub(super) idb: bool,
    /// Whether the record was shared with the other tabs at `open()`: the scope hears and
    /// posts notices from then on.
    pub(super) listening: bool,
    /// The record as this page shows it.
    pub(super) rec: Record,
    /// Where `rec` came from.
    pub(super) shown: Shown,
    /// The last sequence started; none once the page ends the attempt itself.
    pub(super) resume: Option<Resume>,
    /// The one started before it, however it ended: one another tab's end stopped can
    /// settle after the last one, without an answer, and a submit of its payload then goes
    /// on from it as from the last. None once the page ends the attempt itself.
    pub(super) stopped: Option<Resume>,
    /// Whether this page knows the scope has ended attempts: it ended one, another tab told
    /// it of one, it read a mark, or its `open()`'s sweep listed one. It then lists the
    /// scope's marks whether or not the scope's flag is there (a script may have removed it).
    pub(super) ends: bool,
    /// Since this page's last submit that resumes no other was called, another tab's copy
    /// of another attempt was shown over a pending or paid one this page showed: such a
    /// record is replaced only once its attempt ended, so a submit left unknown in that
    /// attempt cannot go on with it, whatever the page shows when it is pressed again.
    pub(super) replaced: bool,
    /// The submit sequence `submit()` joins, if one runs.
    pub(super) flight: Option<Flight>,
    /// The number of the last sequence.
    pub(super) flights: u32,
    /// The submit sequences that need the lock, in the order asked; the first is under way.
    pub(super) jobs: Vec<SubmitJob>,
    /// The cross-tab lock.
    pub(super) lock: Lock,
    /// Commands not yet polled.
    pub(super) out: Vec<Command>,
}

/// What moves a job on.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step {
    /// Its turn has come.
    Start,
    /// The lock is held.
    Locked,
    /// IndexedDB read the record.
    Read(Result<Option<String>, String>),
    /// IndexedDB committed the write (or failed).
    Written(Result<(), String>),
    /// The try ended.
    Sent(Result<Answer, NoAnswer>),
    /// A wake it asked for.
    Woken(Wake),
}

/// Where a job that reads and writes the record stands.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Stage {
    /// Waiting for the lock.
    Lock,
    /// Waiting for IndexedDB's read.
    Read,
    /// Waiting for IndexedDB to commit `rec`, encoded as `text`.
    Write {
        /// The record stored.
        rec: Record,
        /// Its text.
        text: String,
    },
}

/// Where the scope's lock stands for this page.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Lock {
    /// Not held, not asked for.
    Free,
    /// The lock is asked for.
    Asking,
    /// The Web Lock is held.
    Web,
    /// The tab's own lock is held: the record is this tab's alone.
    Own,
}

/// Where a sequence stands.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum At {
    /// Not started.
    Start,
    /// Reading IndexedDB without the lock for a stored answer; `shown` as it was asked.
    Cached(Record),
    /// Taking the lock and reading the record ([`Stage::Lock`], [`Stage::Read`]).
    Locking(Stage),
    /// Storing the next try's record (its text) in IndexedDB.
    Storing(String),
    /// The try is on its way.
    Sending,
    /// The backoff before the next try, after a try that failed so (its reason, which an
    /// `outcome-unknown` names if the wait ends the submit).
    Waiting(String),
    /// The final answer is settled from the mirror; its IndexedDB write comes next.
    AnswerTurn(String),
    /// The final answer's IndexedDB write (its text).
    AnswerWrite(String),
    /// Settled at its deadline while it waited for the lock: it lets the lock go once held.
    WaitedOut,
}

/// One submit sequence of this page.
pub(super) struct SubmitJob {
    /// Its number (what its promise settles by).
    pub(super) no: u32,
    /// The fingerprint of its payload.
    pub(super) fp: String,
    /// The JSON body.
    pub(super) body: String,
    /// The options of the `Checkout` it was called on: where and how it sends.
    pub(super) send: Rc<Options>,
    /// When `submit()` was called: `deadlineMs` counts from then, the wait for the
    /// scope's lock included.
    pub(super) started: f64,
    /// The marks of ended attempts the page had heard of when `submit()` was called (or
    /// when the submit it resumes was): core::ended's `belongs` reads them.
    pub(super) heard: String,
    /// The key of the failed attempt the page showed when `submit()` was called: Pay
    /// pressed again after that failure means a new attempt (core::plan).
    pub(super) seen_failed: Option<String>,
    /// It resumes this page's submit of the payload left unknown, in the attempt it was
    /// in: where the page was shown another attempt over that one since
    /// ([`Scope::replaced`]), or the lock holder finds another attempt stored, begun after
    /// the pending one shown, an end the page has not heard of yet ended it.
    pub(super) own: bool,
    /// It goes on with an attempt ended since it was called that has no answer yet: its
    /// key is sent again for its own payload, not given up as another end's would be.
    pub(super) resumes_ended: bool,
    /// The key was given up (`reset()`, `finish()`, another tab): no more tries.
    pub(super) abandoned: bool,
    /// Its deadline's timer ran while it was sending or waiting to retry: no more waits.
    pub(super) due: bool,
    /// The record it sends with, once read.
    pub(super) rec: Option<Record>,
    /// Retries done.
    pub(super) retries: u32,
    pub(super) at: At,
}

impl SubmitJob {
    /// A sequence numbered `no` for the payload `body` with fingerprint `fp`.
    pub(super) fn new(
        no: u32,
        fp: String,
        body: String,
        send: Rc<Options>,
        started: f64,
        heard: String,
        seen_failed: Option<String>,
    ) -> Self {
        SubmitJob {
            no,
            fp,
            body,
            send,
            started,
            heard,
            seen_failed,
            own: false,
            resumes_ended: false,
            abandoned: false,
            due: false,
            rec: None,
            retries: 0,
            at: At::Start,
        }
    }

    /// Whether it waits, before a try, for what another tab can hold up: its turn, the
    /// lock, or IndexedDB (its stored answer read without the lock, its record read or a
    /// try's write, behind a frozen tab's transaction).
    pub(super) fn held_up(&self) -> bool {
        matches!(
            self.at,
            At::Start | At::Cached(_) | At::Locking(_) | At::Storing(_)
        )
    }

    /// The time it has spent of its deadline at `now`: all of it once the deadline's timer
    /// ran, whatever the page's clock (set back meanwhile, it would grant more) says.
    pub(super) fn spent(&self, now: f64) -> f64 {
        if self.due {
            f64::MAX
        } else {
            now - self.started
        }
    }

    /// Whether it sends with `key`.
    pub(super) fn sends(&self, key: &str) -> bool {
        self.rec.as_ref().is_some_and(|r| r.key == key)
    }
}
