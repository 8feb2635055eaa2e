//! One run: the pages of the user's tabs, each with its scope's machine, against the
//! browser's models (localStorage, IndexedDB, Web Locks, BroadcastChannel), the network and
//! the server, all driven by one seeded queue. The user's moves come from the plan; the
//! checks run as things happen and once the run is over.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use idemkey::core::machine::{Input, Scope};
use idemkey::core::options::{Options, RawOptions};

use crate::check::{Checker, Property};
use crate::env::{Env, PageHost, Shared};
use crate::flight::Req;
use crate::lanes::Lanes;
use crate::locks::Locks;
use crate::page::{Live, Page};
use crate::queue::{Ev, PageId, Queue, TabId};
use crate::rng::Rng;
use crate::server::Server;
use crate::txn::{Open, Txn};
use crate::user::{plan, Profile, END_AT, SHORT_TTL_S};

/// A run.
pub struct World {
    pub(crate) env: Shared,
    pub(crate) p: Profile,
    pub(crate) pages: Vec<Page>,
    pub(crate) tab_page: BTreeMap<TabId, PageId>,
    pub(crate) locks: Locks,
    pub(crate) idb: BTreeMap<String, String>,
    pub(crate) txns: BTreeMap<u64, Txn>,
    pub(crate) open: Open,
    pub(crate) last_txn_at: f64,
    pub(crate) lanes: Lanes,
    pub(crate) reqs: BTreeMap<u64, Req>,
    pub(crate) server: Server,
    pub(crate) check: Checker,
    pub(crate) order: usize,
    pub(crate) opts: Options,
    pub(crate) next_id: u64,
    pub(crate) faults_off: bool,
    pub(crate) final_promise: Option<(PageId, u64, u32)>,
    /// The final submit was made a second time.
    pub(crate) final_retried: bool,
    /// The payer of the customer paying in two tabs has moved on (its receipt route).
    pub(crate) moved_on: bool,
    pub(crate) trace: Option<Vec<String>>,
    /// The randomness of the page's time and exits (its own: a run without them draws
    /// nothing from it).
    pub(crate) time: Rng,
    /// The bystander pages' own stream (bystander.rs): a run's other draws are the same
    /// with or without them.
    pub(crate) bystanders: Rng,
    /// The frozen page, from when, until when.
    pub(crate) frozen: Option<(PageId, f64, f64)>,
    /// Pages in the back/forward cache, by tab.
    pub(crate) away: BTreeMap<TabId, PageId>,
    /// Events handled.
    pub steps: u64,
    /// What the run went through.
    pub stats: Stats,
}

/// What a run went through, to tell the schedules cover what they should.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Tries sent.
    pub tries: u64,
    /// Charges the server made.
    pub charges: u64,
    /// Answers replayed by the server.
    pub replays: u64,
    /// Submits settled `outcome-unknown` (abandoned or not).
    pub unknown: u64,
    /// `key-changed` events.
    pub key_changed: u64,
    /// Pages killed (reload, close, crash).
    pub deaths: u64,
    /// Tries sent while another page's try of the scope was in flight.
    pub overlaps: u64,
    /// Uses of Web Storage that threw.
    pub refused: u64,
    /// Violations a waiver let pass, by waiver ([`crate::waiver::NAMES`]).
    pub waived: [u64; crate::waiver::NAMES.len()],
}

/// Seeds the generator of the page's time and exits apart from the run's.
const TIME_STREAM: u64 = 0x7153_0e11_d00d_5eed;
/// Seeds the generator of what else the browser has (throwing storage, the clock, two tabs
/// without Web Locks, the customer paying in two tabs) apart from the others.
const MORE_STREAM: u64 = 0x5eed_b0a7_57e9_0c1c;
/// The bystander pages' stream.
const BYSTANDER_STREAM: u64 = 0xb757_a2de_4d0f_11e5;

/// The options every page opens the checkout with.
fn options(ttl_s: f64) -> Options {
    Options::from_raw(RawOptions {
        scope: Some("cart-1".into()),
        endpoint: Some("/charges".into()),
        ttl_seconds: Some(ttl_s),
        timeout_ms: Some(1000.0),
        max_retries: Some(3.0),
        backoff_base_ms: Some(20.0),
        backoff_max_ms: Some(400.0),
        deadline_ms: Some(5000.0),
        ..RawOptions::default()
    })
    .expect("the simulator's options are valid")
}

impl World {
    /// The run of `seed`, traced or not.
    pub fn new(seed: u64, traced: bool, focus: Option<Property>) -> World {
        let mut rng = Rng::new(seed);
        let mut time = Rng::new(seed ^ TIME_STREAM);
        let mut more = Rng::new(seed ^ MORE_STREAM);
        let p = Profile::draw(&mut rng, &mut time, &mut more);
        let acts = plan(&mut rng, &mut time, &p);
        let mut q = Queue::default();
        for (t, a) in acts {
            q.at(t, Ev::User(a));
        }
        let ttl = if p.forget { SHORT_TTL_S } else { 86_400.0 };
        let opts = options(ttl);
        let env = Env::new(rng, q, &p, &opts);
        // The server's clock is true: where the pages' clock stepped back, a page keeps a key
        // that much longer, and the server keeps it as long (the README: keep keys at least
        // as long as the client's `ttlSeconds`).
        let behind = p.clock.step.map_or(0.0, |(_, back)| back);
        let forget = p.forget.then_some(ttl * 1000.0 + behind);
        let server = Server::new(forget, p.same_basket);
        let mut w = World {
            env: Rc::new(RefCell::new(env)),
            pages: Vec::new(),
            tab_page: BTreeMap::new(),
            locks: Locks::default(),
            idb: BTreeMap::new(),
            txns: BTreeMap::new(),
            open: Open::default(),
            last_txn_at: 0.0,
            lanes: Lanes::default(),
            reqs: BTreeMap::new(),
            server,
            check: Checker::focused(focus, p.web_locks),
            order: 0,
            opts,
            next_id: 0,
            faults_off: false,
            final_promise: None,
            final_retried: false,
            moved_on: false,
            trace: traced.then(Vec::new),
            time,
            bystanders: Rng::new(seed ^ BYSTANDER_STREAM),
            frozen: None,
            away: BTreeMap::new(),
            steps: 0,
            stats: Stats::default(),
            p,
        };
        let profile = format!("profile {:?}", w.p);
        w.note(|| profile);
        w
    }

    /// Adds a trace line (made only when traced).
    pub(crate) fn note(&mut self, line: impl FnOnce() -> String) {
        if self.trace.is_some() {
            let t = self.now();
            let l = line();
            if let Some(tr) = self.trace.as_mut() {
                tr.push(format!("{t:10.3} {l}"));
            }
        }
    }

    pub(crate) fn now(&self) -> f64 {
        self.env.borrow().now
    }

    pub(crate) fn rng<T>(&self, f: impl FnOnce(&mut Rng) -> T) -> T {
        f(&mut self.env.borrow_mut().rng)
    }

    pub(crate) fn at(&self, t: f64, ev: Ev) {
        self.env.borrow_mut().q.at(t, ev);
    }

    pub(crate) fn micro(&self, ev: Ev) {
        let mut e = self.env.borrow_mut();
        let now = e.now;
        e.q.micro(now, ev);
    }

    pub(crate) fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Runs to the end; the first violation, if any.
    pub fn run(&mut self) -> Option<(Property, String)> {
        loop {
            let next = self.env.borrow_mut().q.pop();
            let Some((t, ev)) = next else { break };
            if t > END_AT {
                break;
            }
            self.env.borrow_mut().now = t;
            self.steps += 1;
            self.step(ev);
            if self.check.violation.is_some() {
                return self.check.violation.clone();
            }
        }
        self.finale();
        self.check.violation.clone()
    }

    fn step(&mut self, ev: Ev) {
        match ev {
            Ev::User(a) => self.user(a),
            Ev::Feed { page, inst, input } => self.feed(page, inst, input),
            Ev::LocalApply {
                page,
                key,
                value,
                seq,
            } => self.local_apply(page, key, value, seq),
            Ev::Bystander(page) => self.bystander_opens(page),
            Ev::FlagRemoved => self.flag_removed(),
            Ev::Idb(id) => self.idb_run(id),
            Ev::IdbAnswer {
                id,
                page,
                inst,
                input,
            } => self.idb_answer(id, page, inst, input),
            Ev::Arrive(id) => self.arrive(id),
            Ev::Commit(id) => self.commit(id),
            Ev::Abort(id) => self.abort(id),
            Ev::Answer { id, answer } => self.answer(id, answer),
            Ev::Due { page, inst, no } => self.due(page, inst, no),
        }
    }

    /// The live machine `inst` of `page`, if it is still there.
    pub(crate) fn live(&mut self, page: PageId, inst: u64) -> Option<&mut Live> {
        let p = self.pages.get_mut(page).filter(|p| p.alive)?;
        p.live.as_mut().filter(|l| l.inst == inst)
    }

    pub(crate) fn feed(&mut self, page: PageId, inst: u64, input: Input) {
        let Some(l) = self.live(page, inst) else {
            return;
        };
        let _ = l;
        if let Some(until) = self.frozen_until(page) {
            return self.at(until, Ev::Feed { page, inst, input });
        }
        self.note(|| format!("p{page} <- {input:?}"));
        if let Input::Answer(a) = &input {
            self.pages[page].answered = Some(a.status);
        }
        if let Some(l) = self.live(page, inst) {
            l.m.handle(input);
        }
        self.saw(page);
        self.drain(page);
        self.pages[page].answered = None;
    }

    /// Notes the key `page` shows if it is bound to a payload.
    fn saw(&mut self, page: PageId) {
        let now = self.now();
        let p = &mut self.pages[page];
        let Some(l) = p.live.as_ref().filter(|_| p.alive) else {
            return;
        };
        if l.m.record().fingerprint.is_some() {
            let key = l.m.record().key.clone();
            p.saw_bound.entry(key).or_insert((self.steps, now));
        }
    }

    /// A page loads in `tab` and opens the checkout.
    pub(crate) fn load(&mut self, tab: TabId) -> PageId {
        let id = self.new_page(tab);
        self.tab_page.insert(tab, id);
        self.open_scope(id, true);
        id
    }

    /// A page loads in `tab`: its view of localStorage, nothing opened yet.
    pub(crate) fn new_page(&mut self, tab: TabId) -> PageId {
        let id = self.pages.len();
        self.env.borrow_mut().local.load(id);
        let crash_left = match self.p.crash {
            Some((t, n)) if t == tab && !self.tab_page.contains_key(&tab) => Some(n),
            _ => None,
        };
        self.pages.push(Page::new(tab, crash_left));
        id
    }

    /// `Checkout.open` in `page` where its registry has no machine for the scope.
    pub(crate) fn open_scope(&mut self, page: PageId, sweep: bool) {
        let host = PageHost {
            page,
            tab: self.pages[page].tab,
            env: self.env.clone(),
        };
        let m = Scope::open(host, Rc::new(self.opts.clone()), sweep);
        let inst = self.id();
        let name = m.rec_key().to_string();
        let p = &mut self.pages[page];
        p.last_state = Some(m.record().state.as_str());
        p.live = Some(Live {
            inst,
            m,
            checkouts: 1,
            listening: false,
            name,
        });
        self.note(|| format!("p{page} opened machine m{inst}"));
        self.saw(page);
        self.opened(page);
        self.drain(page);
    }

    /// Runs the commands of `page`'s machine; then lets it go if no `Checkout` uses it and
    /// it has no work. The decision they came from is done: its writes are forgotten.
    pub(crate) fn drain(&mut self, page: PageId) {
        self.run_commands(page);
        self.env.borrow_mut().step.retain(|(p, _)| *p != page);
    }

    /// [`World::drain`]'s work.
    fn run_commands(&mut self, page: PageId) {
        loop {
            let p = &mut self.pages[page];
            if !p.alive {
                return;
            }
            let Some(l) = p.live.as_mut() else { return };
            let inst = l.inst;
            let Some(cmd) = l.m.poll() else { break };
            if let Some(n) = p.crash_left.as_mut() {
                if *n == 0 {
                    self.note(|| format!("p{page} crashes before {cmd:?}"));
                    self.kill(page);
                    return;
                }
                *n -= 1;
            }
            self.note(|| format!("p{page} -> {cmd:?}"));
            self.dispatch(page, inst, cmd);
            self.count_towards_freeze(page);
        }
        let p = &mut self.pages[page];
        if let Some(l) = &p.live {
            if l.checkouts == 0 && !l.m.kept() {
                p.live = None;
                self.note(|| format!("p{page} lets its machine go"));
            }
        }
    }

    /// `page` dies: the browser frees its locks and drops its requests for them.
    pub(crate) fn kill(&mut self, page: PageId) {
        let p = &mut self.pages[page];
        if !p.alive {
            return;
        }
        p.alive = false;
        p.live = None;
        self.stats.deaths += 1;
        self.env.borrow_mut().local.unload(page);
        self.note(|| format!("p{page} dies"));
        if self.frozen_until(page).is_some() {
            // Its read's answer would wait for a thaw: the transaction ends with the page.
            self.page_txn_gone(page);
        }
        for (pg, inst) in self.locks.page_gone(page) {
            self.micro(Ev::Feed {
                page: pg,
                inst,
                input: Input::LockGranted,
            });
        }
    }
}

/// The pages' clock (`Date.now()`, ms since the epoch), as the machines read it.
pub(crate) fn env_now(env: &Shared) -> f64 {
    let e = env.borrow();
    e.clock.read(e.now)
}
