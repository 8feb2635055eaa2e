//! The network between the pages and the server: a try lost before the server saw it, an
//! answer lost after, a try slower than its timeout (the server still does the work), and
//! the timeout itself; a dead page's try in flight reaches the server or not.

use idemkey::core::machine::{Answer, Input, NoAnswer, Request};

use idemkey::core::options::StorageKind;

use crate::check::{order_of, From, Property};
use crate::flight::Req;
use crate::queue::{Ev, PageId};
use crate::server::{fault, Handled, Reply};
use crate::waiver::Waiver;
use crate::world::{env_now, World};

impl World {
    /// A try leaves `page`: checked (the key shown, the `attempt` event before it, one key
    /// per order), then on its way.
    pub(crate) fn send(&mut self, page: PageId, inst: u64, r: Request) {
        let now = self.now();
        // When a page first showed the key bound to a payload: the Pay that chose it, which
        // the docs' lag bounds, whichever page sends it first (one that read it later, say).
        let bound = (self.pages.iter())
            .filter_map(|q| q.saw_bound.get(&r.key_value).map(|(_, t)| *t))
            .fold(now, f64::min);
        let p = &mut self.pages[page];
        let l = p.live.as_ref().expect("a live machine sends");
        let shown = l.m.record().clone();
        p.sent_key = Some(r.key_value.clone());
        // The machine runs its sequences one at a time, in the order asked: the one sending
        // is its first that has not settled.
        let first = p.promises.range_mut((inst, 0)..=(inst, u32::MAX));
        if let Some((_, pr)) = first.into_iter().find(|(_, pr)| pr.settled.is_none()) {
            pr.sent = Some(r.key_value.clone());
        }
        let attempt_first = matches!(&p.last_event, Some(e) if e.key == r.key_value
            && matches!(e.kind, idemkey::core::machine::EventKind::Attempt { .. }));
        if shown.key != r.key_value {
            let msg = format!("p{page} shows {} and sends {}", shown.key, r.key_value);
            self.check.fail(Property::ShownIsSent, msg);
        }
        if !attempt_first {
            let msg = format!(
                "p{page} sends {} without an attempt event just before",
                r.key_value
            );
            self.check.fail(Property::EventsInOrder, msg);
        }
        let order = order_of(&r.body);
        let storage = l.m.storage();
        let from = From {
            tab: p.tab,
            page,
            memory: storage == StorageKind::Memory,
            own: !self.p.web_locks || (p.idb_failed && storage != StorageKind::Local),
            unordered: p.idb_failed,
            fell: storage != StorageKind::Local,
            restored: p.restored,
            at: now,
            bound,
        };
        let clock = env_now(&self.env);
        self.before_send(page, &r.key_value, order);
        let server = &self.server;
        let failed = |k: &str| server.failed(k);
        // Whether the page showed key `k` bound before the key it sends.
        let saw = &self.pages[page].saw_bound;
        let sent_at = saw.get(&r.key_value).map_or(u64::MAX, |(step, _)| *step);
        let seen = |k: &str| saw.get(k).is_some_and(|(at, _)| *at < sent_at);
        self.check.lost_from(&self.env.borrow());
        self.check.on_send(
            order,
            &r.key_value,
            from,
            (shown.expires_at, clock),
            failed,
            seen,
        );
        self.check_send(page, &r.key_value, order);
        let id = self.id();
        self.stats.tries += 1;
        let overlap = self.reqs.values().any(|q| !q.done && q.page != page);
        self.stats.overlaps += u64::from(overlap);
        let faults = !self.faults_off;
        let p = self.p.clone();
        let (lost, slow, decline, up, lost_at) = self.rng(|g| {
            (
                g.chance(p.lost_before) && faults,
                g.chance(p.slow) && faults,
                g.chance(p.decline) && faults,
                g.range(1.0, 40.0),
                g.range(1.0, 50.0),
            )
        });
        self.reqs.insert(
            id,
            Req {
                page,
                inst,
                key: r.key_value.clone(),
                body: r.body.clone(),
                done: false,
                decline,
                before_expiry: shown.expires_at - clock,
            },
        );
        let late = self.lateness(page);
        self.at(now + r.timeout_ms + late, Ev::Abort(id));
        if lost {
            self.at(now + lost_at, Ev::Answer { id, answer: None });
            return;
        }
        let up = if slow {
            r.timeout_ms * self.rng(|g| g.range(0.5, 1.5))
        } else {
            up
        };
        self.at(now + up, Ev::Arrive(id));
    }

    /// Try `id` reaches the server.
    pub(crate) fn arrive(&mut self, id: u64) {
        let Some(r) = self.reqs.get(&id) else { return };
        let (page, key, body, decline) = (r.page, r.key.clone(), r.body.clone(), r.decline);
        let before_ms = r.before_expiry;
        let (cancelled, faulted, pick, ra, quick, long, proc) = self.rng(|g| {
            (
                g.chance(0.5),
                g.chance(self.p.fault),
                g.below(7),
                g.chance(0.5),
                g.range(1.0, 10.0),
                g.chance(0.1),
                g.range(5.0, 150.0),
            )
        });
        if !self.pages[page].alive && cancelled {
            return;
        }
        if faulted && !self.faults_off {
            self.note(|| format!("server: fault for {key}"));
            return self.respond(id, fault(pick, ra), quick);
        }
        let forgot = self.server.forgotten.len();
        let now = self.now();
        let handled = self.server.arrive(&key, &body, now, decline);
        if self.server.forgotten.len() > forgot {
            let msg = || format!("{key} reached the server after it forgot it");
            let waiver = Some(Waiver::OnTheWire { before_ms });
            self.check
                .check(Property::ForgottenNotResent, false, waiver, msg);
        }
        match handled {
            Handled::Now(reply) => {
                self.stats.replays += u64::from(reply.replayed.is_some());
                self.note(|| format!("server: {key} -> {}", reply.status));
                self.respond(id, reply, quick);
            }
            Handled::Started => {
                self.note(|| format!("server: {key} starts"));
                // A charge held up to 3 s outlasts the client's `timeoutMs` (1 s here): a
                // fault like a slow network, off once the faults stop, or the final submit
                // retries on `409` until its key expires (ttlSeconds 20 in some runs).
                let proc = if long && !self.faults_off {
                    proc * 20.0
                } else {
                    proc
                };
                self.at(now + proc, Ev::Commit(id));
            }
        }
    }

    /// The server is done with try `id`'s work: the charge (or decline) and its answer.
    pub(crate) fn commit(&mut self, id: u64) {
        let Some(r) = self.reqs.get(&id) else { return };
        let (key, body, decline) = (r.key.clone(), r.body.clone(), r.decline);
        let reply = self.server.commit(&key, decline);
        self.note(|| format!("server: {key} committed {}", reply.status));
        if reply.status == 201 {
            self.stats.charges += 1;
            let clock = env_now(&self.env);
            self.check.lost_from(&self.env.borrow());
            self.check.on_charge(order_of(&body), &key, clock);
        }
        self.respond(id, reply, 0.0);
    }

    /// The server's answer travels back `after` ms later (more the network's delay), or
    /// is lost on the way.
    fn respond(&mut self, id: u64, reply: Reply, after: f64) {
        let (lost, down) = self.rng(|g| (g.chance(self.p.lost_after), g.range(1.0, 40.0)));
        let answer = (!lost || self.faults_off).then_some(Answer {
            status: reply.status,
            body: reply.body,
            retry_after: reply.retry_after,
            replayed: reply.replayed,
        });
        self.at(self.now() + after + down, Ev::Answer { id, answer });
    }

    /// Try `id`'s answer (or failure) reaches its page, unless it timed out before.
    pub(crate) fn answer(&mut self, id: u64, answer: Option<Answer>) {
        let input = match answer {
            Some(a) => Input::Answer(a),
            None => Input::NoAnswer(NoAnswer::Network),
        };
        self.end_try(id, input);
    }

    /// Try `id`'s timeout: the page aborts it, unless its answer came before.
    pub(crate) fn abort(&mut self, id: u64) {
        let page = self.reqs.get(&id).map(|r| r.page);
        if let Some(until) = page.and_then(|p| self.frozen_until(p)) {
            // A frozen page's timer fires once it thaws; an answer may come first.
            return self.at(until, Ev::Abort(id));
        }
        self.end_try(id, Input::NoAnswer(NoAnswer::Timeout));
    }

    /// Feeds try `id`'s page how it ended (`input`), the first time only.
    fn end_try(&mut self, id: u64, input: Input) {
        let Some(r) = self.reqs.get_mut(&id) else {
            return;
        };
        if r.done {
            return;
        }
        r.done = true;
        let (page, inst) = (r.page, r.inst);
        self.micro(Ev::Feed { page, inst, input });
    }
}
