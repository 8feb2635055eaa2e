//! What `open()` writes to Web Storage (nothing for a new key, a test write where it found
//! the record), and how a localStorage that takes no writes is found out: at `open()` from
//! that test write, else at the first submit's write, with its `storage-fallback` event.
//! And what the next page shows where one went away before IndexedDB committed its key, and
//! what a page keeps of a scope no `Checkout` uses any more.

use super::*;
use crate::core::options::StorageKind;
use crate::core::record::{record_key, Record};
use crate::core::state::State;
use alloc::rc::Rc;

/// [`TestHost`] with every Web Storage write logged, and localStorage refusing writes
/// (reads still work) when `full`.
#[derive(Default)]
struct Logged {
    inner: TestHost,
    full: bool,
    writes: Vec<String>,
}

impl Logged {
    /// A page whose localStorage reads but takes no writes (a full quota).
    fn full() -> Logged {
        Logged {
            full: true,
            ..Logged::default()
        }
    }
}

impl Host for Logged {
    fn now_ms(&mut self) -> f64 {
        self.inner.now_ms()
    }
    fn fill_random(&mut self, out: &mut [u8]) {
        self.inner.fill_random(out)
    }
    fn web_locks(&mut self) -> bool {
        true
    }
    fn storage_usable(&mut self, k: StorageKind) -> Result<bool, String> {
        self.inner.storage_usable(k)
    }
    fn storage_get(&mut self, k: StorageKind, key: &str) -> Result<Option<String>, String> {
        self.inner.storage_get(k, key)
    }
    fn storage_set(&mut self, k: StorageKind, key: &str, v: &str) -> Result<(), String> {
        self.writes.push(format!("set {} {key}", k.as_str()));
        if self.full && k == StorageKind::Local {
            return Err("QuotaExceededError: the quota has been exceeded".into());
        }
        self.inner.storage_set(k, key, v)
    }
    fn storage_remove(&mut self, k: StorageKind, key: &str) {
        self.writes.push(format!("remove {} {key}", k.as_str()));
        self.inner.storage_remove(k, key)
    }
    fn storage_keys(&mut self, k: StorageKind, prefix: &str) -> Vec<String> {
        self.inner.storage_keys(k, prefix)
    }
}

/// The `storage-fallback` events among `cmds`, as (from, to).
fn fallbacks(cmds: &[Command]) -> Vec<(&'static str, &'static str)> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Emit(Event {
                kind: EventKind::StorageFallback { from, to, .. },
                ..
            }) => Some((*from, *to)),
            _ => None,
        })
        .collect()
}

/// A key another page stored.
const FOUND: &str = "0b4f6c1e-3c0a-4d7e-9a55-1f2e3d4c5b6a";

/// Submits `{}` and answers the lock and IndexedDB's read (no record): the commands that
/// follow, the write before the first try among them.
fn submit_finding_nothing(s: &mut Scope<Logged>) -> Vec<Command> {
    s.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(s);
    s.handle(Input::LockGranted);
    drain(s);
    s.handle(Input::IdbRead(Ok(None)));
    drain(s)
}

/// A pending record of `key` for the scope of [`options`], as a tab stored it.
fn pending(key: &str) -> String {
    let mut r = Record::new(key, "cart-1", 0.0, 86_400_000.0);
    r.state = State::Pending;
    r.fingerprint = Some("f1:2c112c80e518c00f".into());
    r.attempts = 1;
    r.rev = 1;
    r.encode()
}

// P-key-stable: nothing is stored before the first submit
#[test]
fn open_of_a_new_scope_writes_nothing() {
    let opts = options();
    let mut s = Scope::open(Logged::default(), opts.clone().into(), false);
    assert!(s.host.writes.is_empty(), "{:?}", s.host.writes);
    assert!(drain(&mut s)
        .iter()
        .all(|c| !matches!(c, Command::Lock { .. } | Command::IdbPut { .. })));
}

#[test]
fn a_local_storage_that_takes_no_writes_is_left_at_the_first_submits_write() {
    let opts = options();
    let mut s = Scope::open(Logged::full(), opts.clone().into(), false);
    assert_eq!(s.storage(), StorageKind::Local);
    assert!(fallbacks(&drain(&mut s)).is_empty());
    let shown = s.record().key.clone();
    assert_eq!(
        fallbacks(&submit_finding_nothing(&mut s)),
        [("local", "session")]
    );
    assert_eq!(s.storage(), StorageKind::Session);
    // The pending key's copy is where a reload of this tab finds it.
    let at = record_key(&opts.namespace, &opts.scope);
    let found = s.host.storage_get(StorageKind::Session, &at).unwrap();
    assert!(found.is_some_and(|t| t.contains(&shown) && t.contains("pending")));
}

#[test]
fn a_local_storage_that_takes_no_writes_is_left_at_open_also_when_the_record_is_found() {
    let opts = options();
    let mut host = Logged::full();
    let at = record_key(&opts.namespace, &opts.scope);
    host.inner
        .maps
        .insert((StorageKind::Local as u8, at), pending(FOUND));
    let mut s = Scope::open(host, opts.clone().into(), false);
    // The pending key is given back, and the storage that would lose its next write is
    // left now, with its event, as it was before any submit.
    assert_eq!(s.record().key, FOUND);
    assert_eq!(s.storage(), StorageKind::Session);
    assert_eq!(fallbacks(&drain(&mut s)), [("local", "session")]);
}

#[test]
fn a_page_that_dies_before_its_key_is_committed_leaves_the_next_page_a_key_it_sends() {
    let opts = options();
    let mut s = Scope::open(Logged::default(), opts.clone().into(), false);
    drain(&mut s);
    let first = s.record().key.clone();
    // The first submit takes the lock: IndexedDB holds nothing, so the key is stored.
    submit_finding_nothing(&mut s);
    // The page goes away before IndexedDB commits the write.
    let host = core::mem::take(&mut s.host);
    let mut next = Scope::open(host, opts.clone().into(), false);
    let shown = next.record().key.clone();
    assert_eq!(
        shown, first,
        "the next page shows another key than the one stored"
    );
    drain(&mut next);
    let started = next.submit("{}".into(), "fp".into(), Rc::new(options()));
    assert_eq!(started, Submitted::Started(1));
    next.handle(Input::LockGranted);
    next.handle(Input::IdbRead(Ok(None)));
    next.handle(Input::IdbWritten(Ok(())));
    let cmds = drain(&mut next);
    assert_eq!(
        sent(&cmds).map(|r| r.key_value.as_str()),
        Some(shown.as_str())
    );
}

// P-open-finds-fallen-back: the newest copy of the backends, not the best backend's older one
#[test]
fn a_reload_shows_the_answer_that_went_to_session_storage_over_an_older_local_copy() {
    let (s, _) = settled(TestHost::default());
    let mut pending = s.record().clone();
    pending.state = State::Pending;
    pending.fingerprint = Some("fp".into());
    pending.attempts = 1;
    pending.rev = 2;
    pending.updated_at = 10.0;
    let mut paid = pending.clone();
    paid.state = State::Succeeded;
    paid.response = Some(crate::core::record::StoredResponse {
        status: 201,
        body: "{}".into(),
        replayed: false,
    });
    paid.rev = 3;
    paid.updated_at = 20.0;
    // localStorage filled up after the pending copy: the answer's copy went to sessionStorage.
    let mut host = TestHost::default();
    host.maps.insert(
        (StorageKind::Local as u8, s.rec_key().into()),
        pending.encode(),
    );
    host.maps.insert(
        (StorageKind::Session as u8, s.rec_key().into()),
        paid.encode(),
    );
    let reloaded = Scope::open(host, options().into(), false);
    assert_eq!(reloaded.record().key, paid.key);
    assert_eq!(reloaded.record().state, State::Succeeded);
}

/// The page keeps a scope's machine with no `Checkout` left while its last submit has no
/// answer, so a `Checkout` opened again resumes that attempt as the page's own; not once
/// the submit was answered.
#[test]
fn the_page_keeps_the_machine_of_a_submit_left_unknown() {
    let mut once = options();
    once.max_retries = 0;
    let (mut s, mut idb) = settled(TestHost::default());
    assert!(!s.kept());
    first_try(&mut s, &mut idb, once.clone());
    s.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut s);
    assert!(!s.busy() && s.kept());
    first_try(&mut s, &mut idb, once);
    s.handle(answer(201, None));
    drain(&mut s);
    s.handle(Input::Woken(Wake::AnswerTurn));
    drain(&mut s);
    s.handle(Input::IdbWritten(Ok(())));
    drain(&mut s);
    assert!(!s.busy() && !s.kept());
}
