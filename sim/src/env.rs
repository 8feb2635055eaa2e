//! What the pages of a run share through their hosts, synchronously: the clock, the
//! randomness, the queue (a localStorage write schedules its arrival elsewhere),
//! localStorage, sessionStorage (per tab: it survives a reload), memory (per page), and
//! how Web Storage refuses in the run.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use idemkey::core::machine::Host;
use idemkey::core::options::{Options, StorageKind};
use idemkey::core::record::Record;

use crate::clock::Clock;
use crate::ends::Ends;
use crate::local::Local;
use crate::queue::{PageId, Queue, TabId};
use crate::refusals::{StorageFault, Use};
use crate::rng::Rng;
use crate::user::Profile;

/// The shared state of a run.
pub struct Env {
    /// Simulated ms since the run began.
    pub now: f64,
    /// The run's randomness.
    pub rng: Rng,
    /// What happens next.
    pub q: Queue,
    /// localStorage.
    pub local: Local,
    /// sessionStorage, by tab.
    pub session: BTreeMap<(TabId, String), String>,
    /// The memory backend, by page.
    pub memory: BTreeMap<(PageId, String), String>,
    /// Whether pages have the Web Locks API (else each tab's record is its own).
    pub web_locks: bool,
    /// The pages' clock.
    pub clock: Clock,
    /// How Web Storage refuses, if it does.
    pub refusal: Option<StorageFault>,
    /// Uses of Web Storage that threw.
    pub refused: u64,
    /// The pages whose IndexedDB failed: the records they write live in localStorage alone.
    pub no_idb: BTreeSet<PageId>,
    /// The tab that wrote each localStorage item last, and whether that page's IndexedDB
    /// had failed then (the item then held a record IndexedDB did not).
    pub writers: BTreeMap<String, (TabId, bool)>,
    /// The localStorage items each page wrote in the decision whose commands the world is
    /// carrying out ([`Env::idb_failed`]; the world clears a page's once it has them all).
    pub step: Vec<(PageId, String)>,
    /// `(key, swept)`: the record of `key` that a page without IndexedDB (then) wrote to
    /// localStorage was replaced there by another tab's write of another attempt's record,
    /// or (`swept`) removed by a page whose view of localStorage still held an older value
    /// (a sweep of the expired record it read).
    pub replaced: Vec<(String, bool, f64)>,
    /// The scope's ends as the world sees them: who listed its marks, where its flag is.
    pub ends: Ends,
}

impl Env {
    /// The shared state of a run of `profile`, its pages' options `opts`: nothing stored
    /// yet, the queue `q` of the user's moves, `rng` the run's randomness.
    pub fn new(rng: Rng, q: Queue, profile: &Profile, opts: &Options) -> Env {
        Env {
            now: 0.0,
            rng,
            q,
            local: Local::with_lag(profile.lag_ms),
            session: BTreeMap::new(),
            memory: BTreeMap::new(),
            web_locks: profile.web_locks,
            clock: profile.clock,
            refusal: profile.refusal,
            refused: 0,
            no_idb: BTreeSet::new(),
            writers: BTreeMap::new(),
            step: Vec::new(),
            replaced: Vec::new(),
            ends: Ends::new(&opts.namespace, &opts.scope),
        }
    }

    /// The keys whose record lived in localStorage alone (IndexedDB had failed in the page
    /// that wrote it there) and another tab's write of another attempt replaced there, or
    /// (`swept`) a page with a late view of localStorage removed, each with when it first
    /// was (simulated ms).
    pub fn replaced(&self, swept: bool) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        for (k, s, at) in &self.replaced {
            if *s == swept {
                out.entry(k.clone()).or_insert(*at);
            }
        }
        out
    }

    /// Notes who writes `value` to localStorage's `item` from `page` of `tab`, and whether
    /// it replaces another tab's record of another attempt there, or removes a record its
    /// page's late view did not have ([`Env::replaced`]).
    fn note_write(&mut self, item: &str, value: Option<&str>, (page, tab): (PageId, TabId)) {
        let key_of = |t: &str| Record::decode(t).ok().map(|r| r.key);
        let latest = self.local.latest(item);
        let late = self.local.get(page, item) != latest;
        let old = latest.and_then(|t| key_of(&t));
        let writer = self.writers.get(item).filter(|(_, alone)| *alone);
        // Only a write from a view that had not had the record: a page that read it goes
        // on from it, and one that replaces it anyway is at fault.
        if let (Some(old), Some((by_tab, _)), true) = (old, writer, late) {
            match value.map(key_of) {
                Some(Some(new)) if old != new && *by_tab != tab => {
                    self.replaced.push((old, false, self.now))
                }
                None => self.replaced.push((old, true, self.now)),
                _ => {}
            }
        }
        let alone = self.no_idb.contains(&page);
        self.writers.insert(item.into(), (tab, alone));
        self.step.push((page, item.into()));
    }

    /// `page` said its IndexedDB failed (its `storage-fallback` event): the records it
    /// writes from now on live in localStorage alone, and so do those it wrote in the
    /// decision that said so. A page learns of the failure and writes its copy in one
    /// decision, the write synchronous and the event a command carried out after it: the
    /// copy written then is one IndexedDB never held.
    pub fn idb_failed(&mut self, page: PageId) {
        self.no_idb.insert(page);
        for (p, item) in &self.step {
            if let Some(w) = self.writers.get_mut(item).filter(|_| *p == page) {
                w.1 = true;
            }
        }
    }

    /// The error a `u` of `kind` throws now, if it does (counted).
    fn refuses(&mut self, kind: StorageKind, u: Use) -> Result<(), String> {
        match self.refusal.and_then(|f| f.refuses(kind, u, self.now)) {
            Some(e) => {
                self.refused += 1;
                Err(e.into())
            }
            None => Ok(()),
        }
    }
}

/// The shared state as each page's host holds it.
pub type Shared = Rc<RefCell<Env>>;

/// One page's clock, randomness and Web Storage, over the run's [`Env`].
pub struct PageHost {
    /// The page.
    pub page: PageId,
    /// Its tab.
    pub tab: TabId,
    /// The run's shared state.
    pub env: Shared,
}

impl Host for PageHost {
    fn now_ms(&mut self) -> f64 {
        let e = self.env.borrow();
        e.clock.read(e.now)
    }
    fn fill_random(&mut self, out: &mut [u8]) {
        let mut e = self.env.borrow_mut();
        for b in out {
            *b = e.rng.next_u64() as u8;
        }
    }
    fn web_locks(&mut self) -> bool {
        self.env.borrow().web_locks
    }
    fn storage_usable(&mut self, kind: StorageKind) -> Result<bool, String> {
        self.env.borrow_mut().refuses(kind, Use::Read)?;
        Ok(true)
    }
    fn storage_get(&mut self, kind: StorageKind, key: &str) -> Result<Option<String>, String> {
        self.env.borrow_mut().refuses(kind, Use::Read)?;
        let mut e = self.env.borrow_mut();
        let got = match kind {
            StorageKind::Local => e.local.get(self.page, key),
            StorageKind::Session => e.session.get(&(self.tab, key.into())).cloned(),
            StorageKind::Memory => e.memory.get(&(self.page, key.into())).cloned(),
        };
        if got.is_some() {
            // A mark read other than as one of the entries the page just listed is read by
            // its own entry: the read the docs have write the flag again.
            let now = e.now;
            let own_entry = !e.ends.listed_read(self.page, now, key);
            if kind == StorageKind::Local && own_entry {
                let flagless = e.local.get(self.page, e.ends.flag()).is_none();
                let writable = e.refusal.and_then(|f| f.refuses(kind, Use::Write, now));
                e.ends.read_local(key, flagless, writable.is_none());
            }
            e.ends.touched(self.page, key);
        }
        Ok(got)
    }
    fn storage_set(&mut self, kind: StorageKind, key: &str, value: &str) -> Result<(), String> {
        self.env.borrow_mut().refuses(kind, Use::Read)?;
        self.env.borrow_mut().refuses(kind, Use::Write)?;
        self.write(kind, key, Some(value.into()));
        Ok(())
    }
    fn storage_remove(&mut self, kind: StorageKind, key: &str) {
        if self.env.borrow_mut().refuses(kind, Use::Read).is_ok() {
            self.write(kind, key, None);
        }
    }
    fn storage_keys(&mut self, kind: StorageKind, prefix: &str) -> Vec<String> {
        if self.env.borrow_mut().refuses(kind, Use::Read).is_err() {
            return Vec::new();
        }
        let mut e = self.env.borrow_mut();
        let keys = match kind {
            StorageKind::Local => e.local.keys(self.page, prefix),
            StorageKind::Session => keys_of(&e.session, self.tab, prefix),
            StorageKind::Memory => keys_of(&e.memory, self.page, prefix),
        };
        for k in &keys {
            e.ends.touched(self.page, k);
        }
        let now = e.now;
        e.ends.listed(self.page, now, &keys);
        keys
    }
}

fn keys_of(m: &BTreeMap<(usize, String), String>, who: usize, prefix: &str) -> Vec<String> {
    m.keys()
        .filter(|(w, k)| *w == who && k.starts_with(prefix))
        .map(|(_, k)| k.clone())
        .collect()
}

impl PageHost {
    fn write(&mut self, kind: StorageKind, key: &str, value: Option<String>) {
        let mut guard = self.env.borrow_mut();
        let e = &mut *guard;
        if value.is_some() {
            e.ends.touched(self.page, key);
        }
        match kind {
            StorageKind::Local => {
                e.ends.wrote_local(key);
                e.note_write(key, value.as_deref(), (self.page, self.tab));
                let now = e.now;
                e.local
                    .write(self.page, key, value, now, &mut e.rng, &mut e.q);
            }
            StorageKind::Session => set(&mut e.session, (self.tab, key.into()), value),
            StorageKind::Memory => set(&mut e.memory, (self.page, key.into()), value),
        }
    }
}

fn set(m: &mut BTreeMap<(usize, String), String>, at: (usize, String), value: Option<String>) {
    match value {
        Some(v) => {
            m.insert(at, v);
        }
        None => {
            m.remove(&at);
        }
    }
}
