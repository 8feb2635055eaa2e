//! What the browser does with each command a machine gives (the driver's part, as
//! src/browser/driver.js does it): Web Locks, timers and microtasks, the channel, `storage`
//! events, events and promises; IndexedDB's transactions are idb.rs's.

use idemkey::core::machine::{Command, Input};
use idemkey::error::Error;

use crate::check::Property;
use crate::lanes::Lane;
use crate::queue::{Ev, PageId};
use crate::user::Act;
use crate::world::World;

/// The reason of an `outcome-unknown` that gave up waiting for the lock another tab holds.
const ANOTHER_TAB: &str = "another-tab";

/// How long after a first final submit that ended `outcome-unknown` the second comes: past
/// the longest freeze and the latest timer.
const FINAL_AGAIN_MS: f64 = 45_000.0;

impl World {
    /// Runs `cmd` of machine `inst` of `page`.
    pub(crate) fn dispatch(&mut self, page: PageId, inst: u64, cmd: Command) {
        match cmd {
            Command::Lock { name } => {
                if self.locks.request(&name, (page, inst)) {
                    self.feed_micro(page, inst, Input::LockGranted);
                }
            }
            Command::Unlock => {
                for (p, i) in self.locks.release((page, inst)) {
                    self.feed_micro(p, i, Input::LockGranted);
                }
            }
            Command::IdbGet { key } | Command::IdbPeek { key } => {
                self.idb_queue(page, inst, key, None)
            }
            Command::IdbPut { key, text } => self.idb_put(page, inst, key, text),
            Command::IdbSweep { prefix } => {
                // As the driver does: the scope's machine says what is due.
                let under: Vec<(String, String)> = self
                    .idb
                    .range(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let Some(l) = self.live(page, inst) else {
                    return;
                };
                let due: Vec<String> = under
                    .into_iter()
                    .filter(|(k, v)| l.m.due(k, v))
                    .map(|(k, _)| k)
                    .collect();
                for k in due {
                    self.idb.remove(&k);
                }
            }
            Command::Send(r) => self.send(page, inst, r),
            Command::Wake { ms, wake } => {
                let ev = Ev::Feed {
                    page,
                    inst,
                    input: Input::Woken(wake),
                };
                if ms > 0.0 {
                    let late = self.lateness(page);
                    self.at(self.now() + ms + late, ev);
                } else {
                    self.micro(ev);
                }
            }
            Command::Emit(e) => {
                if matches!(e.kind, idemkey::core::machine::EventKind::KeyChanged { .. }) {
                    self.stats.key_changed += 1;
                }
                let p = &mut self.pages[page];
                if matches!(
                    e.kind,
                    idemkey::core::machine::EventKind::StorageFallback {
                        from: "indexeddb",
                        ..
                    }
                ) {
                    p.idb_failed = true;
                    self.env.borrow_mut().idb_failed(page);
                }
                self.check.on_event(&e, &mut p.last_state, p.answered);
                p.last_event = Some(e);
            }
            Command::Settle { flight, outcome } => self.settled(page, inst, flight, outcome),
            Command::Post { name, text } => self.post(page, &name, text),
            Command::Listen { .. } => {
                if let Some(l) = self.live(page, inst) {
                    l.listening = true;
                }
            }
        }
    }

    pub(crate) fn feed_micro(&mut self, page: PageId, inst: u64, input: Input) {
        self.micro(Ev::Feed { page, inst, input });
    }

    /// The other listening pages of the scope hear `text`, late, or not at all.
    fn post(&mut self, from: PageId, name: &str, text: String) {
        let to: Vec<(PageId, u64)> = self
            .pages
            .iter()
            .enumerate()
            .filter(|(id, p)| *id != from && p.alive)
            .filter_map(|(id, p)| {
                let l = p.live.as_ref()?;
                (l.listening && l.name == name).then_some((id, l.inst))
            })
            .collect();
        for (page, inst) in to {
            let (lost, delay) =
                self.rng(|r| (r.chance(self.p.bc_loss), r.range(0.0, self.p.bc_delay)));
            if lost && !self.faults_off {
                continue;
            }
            let now = self.now();
            let t = self.lanes.next(Lane::Channel, from, page, now, delay);
            let input = Input::Notice(text.clone());
            self.at(t, Ev::Feed { page, inst, input });
        }
    }

    /// Another tab's localStorage write reaches `page`: its `storage` event follows, late
    /// (overtaking others) or not at all.
    pub(crate) fn local_apply(
        &mut self,
        page: PageId,
        key: String,
        value: Option<String>,
        seq: u64,
    ) {
        let old = self
            .env
            .borrow_mut()
            .local
            .apply(page, &key, value.clone(), seq);
        let Some(old) = old else { return };
        let Some(l) = self.pages[page]
            .live
            .as_ref()
            .filter(|l| l.listening && l.name == key)
        else {
            return;
        };
        let inst = l.inst;
        let (lost, delay) = self.rng(|r| (r.chance(self.p.ev_loss), r.range(0.0, self.p.ev_delay)));
        if lost && !self.faults_off {
            return;
        }
        let _ = old;
        let input = Input::StorageEvent(value);
        let now = self.now();
        let p = &mut self.pages[page];
        p.storage_event_at = p.storage_event_at.max(now + delay);
        let at = p.storage_event_at;
        self.at(at, Ev::Feed { page, inst, input });
    }

    /// Sequence `no` of machine `inst` settled with `outcome`.
    fn settled(
        &mut self,
        page: PageId,
        inst: u64,
        no: u32,
        outcome: Result<idemkey::core::machine::Reply, Error>,
    ) {
        let p = &mut self.pages[page];
        let shown_sent = p.sent_key.clone();
        let Some(pr) = p.promises.get_mut(&(inst, no)) else {
            let msg = format!("p{page}: settled sequence {no}, which no submit started");
            return self.check.fail(Property::EverySubmitSettles, msg);
        };
        if pr.settled.is_some() {
            let msg = format!("p{page}: sequence {no} settled twice");
            return self.check.fail(Property::EverySubmitSettles, msg);
        }
        pr.settled = Some(
            outcome
                .as_ref()
                .map(|r| r.key.clone())
                .map_err(Clone::clone),
        );
        let (order, called, pressed) = (pr.order, pr.called, pr.pressed);
        let heard = pr.heard.clone();
        let listing = pr.listing;
        let sent = pr.sent.clone();
        let answered = matches!(&outcome, Ok(r) if (200..300).contains(&r.status));
        let unknown = matches!(outcome, Err(Error::OutcomeUnknown { .. }));
        match outcome {
            Ok(r) => {
                let check = &self.check;
                // Called after the finish() (a later order), even in the same ms.
                let ended = p.ended.iter().find(|(k, _, ended)| {
                    *k == r.key && order > *ended && !check.reborn(k, *ended)
                });
                if let Some((_, at, _)) = ended {
                    let msg = format!(
                        "p{page}: a submit called at {called} answered from {} finished at {at}",
                        r.key
                    );
                    self.check.fail(Property::FinishedStaysFinished, msg);
                }
                if !r.from_cache && shown_sent.as_deref() != Some(r.key.as_str()) {
                    let msg = format!(
                        "p{page}: resolved for {} after sending {shown_sent:?}",
                        r.key
                    );
                    self.check.fail(Property::ShownIsSent, msg);
                }
                self.check_answer(page, &r.key, order, (pressed, &heard, listing));
            }
            Err(Error::OutcomeUnknown {
                reason, abandoned, ..
            }) => {
                self.stats.unknown += 1;
                if self.first_final(page, inst, no) {
                    // The final submit's budget may go waiting for another tab (its long
                    // request, a frozen tab, late timers): one more final submit, once all
                    // that is over, must resume.
                    self.final_retried = true;
                    self.at(self.now() + FINAL_AGAIN_MS, Ev::User(Act::Final));
                } else if reason != ANOTHER_TAB && !abandoned {
                    // (Gave up waiting for another tab's lock: nothing sent by this submit.)
                    // The key this submit sent, not the page's last one: a submit held back
                    // before its first try (its write waited for a frozen tab's thaw) sent
                    // nothing, and an earlier submit's key may have had its answer since.
                    if let Some(k) = sent {
                        self.check.on_unknown(order, &k);
                    }
                }
            }
            Err(_) => {}
        }
        let unknown = unknown.then_some((pressed, heard, listing));
        self.customer_sees(page, order, answered, unknown);
    }

    /// Whether sequence `no` of machine `inst` of `page` is the first final submit, not
    /// made again yet (it is, when every freeze and late timer is over).
    fn first_final(&self, page: PageId, inst: u64, no: u32) -> bool {
        self.final_promise == Some((page, inst, no)) && !self.final_retried
    }

    /// After the run: every submit of a live page settled, the final one with an answer or
    /// a typed refusal; no lock held or waited for.
    pub(crate) fn finale(&mut self) {
        for (id, p) in self.pages.iter().enumerate() {
            if !p.alive {
                continue;
            }
            for ((inst, no), pr) in &p.promises {
                if pr.settled.is_none() {
                    let msg = format!(
                        "p{id}: sequence {no} of m{inst} (order {}) never settled",
                        pr.order
                    );
                    self.check.fail(Property::EverySubmitSettles, msg);
                }
            }
        }
        if let Some((page, inst, no)) = self.final_promise {
            let pr = &self.pages[page].promises[&(inst, no)];
            match &pr.settled {
                Some(Ok(_)) | Some(Err(Error::PayloadConflict { .. })) | None => {}
                Some(Err(e)) => {
                    let waiver = self.flag_stuck(pr, e);
                    let msg = || format!("the final submit, faults off, could not resume: {e:?}");
                    self.check
                        .check(Property::EverySubmitSettles, false, waiver, msg);
                }
            }
        }
        for (name, (page, inst)) in self.locks.holders() {
            let msg = format!(
                "{name} still held by p{page} m{inst} (alive: {})",
                self.pages[page].alive
            );
            self.check.fail(Property::NoLockLeft, msg);
        }
        for (page, inst) in self.locks.waiters() {
            let msg = format!("p{page} m{inst} still waits for a lock");
            self.check.fail(Property::NoLockLeft, msg);
        }
    }
}
