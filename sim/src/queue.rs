//! The scheduler's queue: what happens next, by time, then microtasks before tasks, then
//! the order scheduled. Everything that happens in a run passes through it.

use std::collections::BTreeMap;

use idemkey::core::machine::{Answer, Input};

pub use crate::ids::{PageId, TabId};
use crate::user::Act;

/// Something due at a time.
#[derive(Debug, Clone)]
pub enum Ev {
    /// The user does `Act`.
    User(Act),
    /// The browser answers machine `inst` of `page` with `input`.
    Feed {
        /// The page.
        page: PageId,
        /// The scope machine's instance (a let-go machine's answers are dropped).
        inst: u64,
        /// What is answered.
        input: Input,
    },
    /// Another tab's localStorage write reaches `page`'s view.
    LocalApply {
        /// The page whose view it reaches.
        page: PageId,
        /// The storage key.
        key: String,
        /// The value (`None`: removed).
        value: Option<String>,
        /// The write's number in the origin's order.
        seq: u64,
    },
    /// A bystander page (another order's checkout) opens its scope, sweeping the namespace.
    Bystander(PageId),
    /// A script of a page of the origin removes the scope's flag of ended attempts.
    FlagRemoved,
    /// IndexedDB runs transaction `id`.
    Idb(u64),
    /// Read transaction `id`'s answer reaches machine `inst` of `page`, the transaction
    /// open while it is handled.
    IdbAnswer {
        /// The transaction.
        id: u64,
        /// The page.
        page: PageId,
        /// The scope machine's instance.
        inst: u64,
        /// The read's answer.
        input: Input,
    },
    /// Request `id` reaches the server.
    Arrive(u64),
    /// The server is done with request `id`.
    Commit(u64),
    /// Request `id`'s timeout fires.
    Abort(u64),
    /// Request `id`'s answer reaches the page (`None`: the connection failed).
    Answer {
        /// The request.
        id: u64,
        /// The answer.
        answer: Option<Answer>,
    },
    /// A submit's deadline (and a second) has passed: it must have settled, unless its tab
    /// was frozen or its timers late.
    Due {
        /// The page.
        page: PageId,
        /// The scope machine's instance.
        inst: u64,
        /// The sequence.
        no: u32,
    },
}

/// Events by (time in µs, 0 for a microtask else 1, order scheduled).
#[derive(Default)]
pub struct Queue {
    map: BTreeMap<(u64, u8, u64), Ev>,
    seq: u64,
}

fn us(t: f64) -> u64 {
    (t.max(0.0) * 1000.0).round() as u64
}

impl Queue {
    /// Schedules `ev` as a task at `t` ms.
    pub fn at(&mut self, t: f64, ev: Ev) {
        self.seq += 1;
        self.map.insert((us(t), 1, self.seq), ev);
    }

    /// Schedules `ev` as a microtask at `t` ms: before the tasks due then.
    pub fn micro(&mut self, t: f64, ev: Ev) {
        self.seq += 1;
        self.map.insert((us(t), 0, self.seq), ev);
    }

    /// The next event and its time in ms.
    pub fn pop(&mut self) -> Option<(f64, Ev)> {
        let ((t, _, _), ev) = self.map.pop_first()?;
        Some((t as f64 / 1000.0, ev))
    }

    /// Whether nothing is due.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
