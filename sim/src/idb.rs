//! IndexedDB as the driver uses it (src/browser/driver.js, `idbGet` and `idbPut`): one
//! store, whose readwrite transactions run one at a time in the order made, across the
//! origin's tabs. A read's transaction stays open while its page handles the answer: a
//! write the machine asks for then (at once, in that same feed) goes into it and lands
//! right after the read, before any other transaction; asked later, a write gets a
//! transaction of its own.

use idemkey::core::machine::Input;

use crate::lanes::Lane;
use crate::queue::{Ev, PageId};
use crate::txn::Txn;
use crate::world::World;

impl World {
    /// A transaction is made; IndexedDB runs the origin's transactions in the order made.
    pub(crate) fn idb_queue(
        &mut self,
        page: PageId,
        inst: u64,
        key: String,
        put: Option<Option<String>>,
    ) {
        let id = self.id();
        let t = (self.now() + self.rng(|r| r.range(0.1, 2.0))).max(self.last_txn_at);
        self.last_txn_at = t;
        self.txns.insert(
            id,
            Txn {
                page,
                inst,
                key,
                put,
            },
        );
        self.at(t, Ev::Idb(id));
    }

    /// A write: in the transaction of the read whose answer `page` handles now, or else
    /// in one of its own.
    pub(crate) fn idb_put(&mut self, page: PageId, inst: u64, key: String, text: Option<String>) {
        if self.open.answering == Some((page, inst)) {
            let faulty = !self.faults_off;
            let abort = self.rng(|r| r.chance(self.p.idb_abort)) && faulty;
            let done = if abort {
                Err("AbortError: the transaction was aborted".to_string())
            } else {
                match text {
                    Some(t) => self.idb.insert(key, t),
                    None => self.idb.remove(&key),
                };
                Ok(())
            };
            let input = Input::IdbWritten(done);
            self.note(|| format!("idb: p{page}'s write in its read's transaction: {input:?}"));
            let delay = self.rng(|r| r.range(0.05, 1.0));
            let at = self
                .lanes
                .next(Lane::Idb, page, page, self.env.borrow().now, delay);
            self.at(at, Ev::Feed { page, inst, input });
        } else {
            self.idb_queue(page, inst, key, Some(text));
        }
    }

    /// Transaction `id` runs (or waits while a read's transaction holds the store):
    /// commits, aborts, or goes through on a connection opened again; a dead page's write
    /// commits or not. A read holds the store until its answer is handled.
    pub(crate) fn idb_run(&mut self, id: u64) {
        if self.open.held.is_some() {
            self.open.blocked.push(id);
            return;
        }
        let Some(t) = self.txns.remove(&id) else {
            return;
        };
        let alive = self.live(t.page, t.inst).is_some();
        let faulty = !self.faults_off && alive;
        let (abort, lost, half) = self.rng(|r| {
            (
                r.chance(self.p.idb_abort),
                r.chance(self.p.idb_lost),
                r.chance(0.5),
            )
        });
        if !alive && !half {
            return;
        }
        let abort = abort && faulty;
        let read = Input::IdbRead;
        let is_read = t.put.is_none();
        let input = match t.put {
            None if abort => read(Err("UnknownError: the read failed".into())),
            None => read(Ok(self.idb.get(&t.key).cloned())),
            Some(_) if abort => {
                Input::IdbWritten(Err("AbortError: the transaction was aborted".into()))
            }
            Some(v) => {
                match v {
                    Some(text) => self.idb.insert(t.key.clone(), text),
                    None => self.idb.remove(&t.key),
                };
                Input::IdbWritten(Ok(()))
            }
        };
        self.note(|| format!("idb runs p{}'s {:?}", t.page, input));
        if !alive {
            return;
        }
        let delay = self.rng(|r| r.range(0.05, 1.0));
        let at = self
            .lanes
            .next(Lane::Idb, t.page, t.page, self.env.borrow().now, delay);
        let (page, inst) = (t.page, t.inst);
        if lost && faulty {
            let why = "UnknownError: Connection to Indexed Database server lost".to_string();
            self.at(
                at,
                Ev::Feed {
                    page,
                    inst,
                    input: Input::IdbReopened(why),
                },
            );
        }
        if is_read && !abort {
            self.open.held = Some(id);
            self.open.held_by = Some(page);
            self.at(
                at,
                Ev::IdbAnswer {
                    id,
                    page,
                    inst,
                    input,
                },
            );
        } else {
            self.at(at, Ev::Feed { page, inst, input });
        }
    }

    /// A page that exits: its transactions not run yet are aborted (nothing of them lands).
    pub(crate) fn abort_txns(&mut self, page: PageId) {
        self.txns.retain(|_, t| t.page != page);
    }

    /// The answer of read `id` is handled, its transaction open meanwhile; then it ends
    /// and the transactions it held up run, in the order made.
    pub(crate) fn idb_answer(&mut self, id: u64, page: PageId, inst: u64, input: Input) {
        let alive = self.pages[page].alive;
        if let Some(until) = self.frozen_until(page).filter(|_| alive) {
            // A frozen page keeps the transaction open until it handles the answer.
            let ev = Ev::IdbAnswer {
                id,
                page,
                inst,
                input,
            };
            return self.at(until, ev);
        }
        self.open.answering = Some((page, inst));
        self.feed(page, inst, input);
        self.open.answering = None;
        if self.open.held == Some(id) {
            self.end_held();
        }
    }

    /// The read transaction holding the store ends; the transactions it held up run, in
    /// the order made.
    fn end_held(&mut self) {
        self.open.held = None;
        self.open.held_by = None;
        let blocked = core::mem::take(&mut self.open.blocked);
        for b in blocked {
            self.idb_run(b);
        }
    }

    /// A page that dies ends the read transaction it holds (its answer will find no one).
    pub(crate) fn page_txn_gone(&mut self, page: PageId) {
        if self.open.held_by == Some(page) {
            self.end_held();
        }
    }
}
