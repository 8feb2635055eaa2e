//! Without IndexedDB, localStorage is the only copy of the record the tabs share: a write
//! it refuses (its quota) moves this tab on to sessionStorage, and leaves in localStorage
//! the copy of the same attempt it could not replace, so the next tab sends that key again
//! and not a new one. [P-no-indexeddb] [P-unknown-resumes]

use super::*;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};

/// A tab of an origin: localStorage shared with the other tabs (and full when `full` is
/// set), sessionStorage and memory its own.
struct Tab {
    inner: TestHost,
    local: Rc<RefCell<BTreeMap<String, String>>>,
    full: Rc<Cell<bool>>,
}

impl Host for Tab {
    fn now_ms(&mut self) -> f64 {
        self.inner.now_ms()
    }
    fn fill_random(&mut self, out: &mut [u8]) {
        self.inner.fill_random(out)
    }
    fn web_locks(&mut self) -> bool {
        true
    }
    fn storage_usable(&mut self, _: StorageKind) -> Result<bool, String> {
        Ok(true)
    }
    fn storage_get(&mut self, k: StorageKind, key: &str) -> Result<Option<String>, String> {
        if k == StorageKind::Local {
            return Ok(self.local.borrow().get(key).cloned());
        }
        self.inner.storage_get(k, key)
    }
    fn storage_set(&mut self, k: StorageKind, key: &str, v: &str) -> Result<(), String> {
        if k == StorageKind::Local {
            if self.full.get() {
                return Err("QuotaExceededError: the quota has been exceeded".into());
            }
            self.local.borrow_mut().insert(key.into(), v.into());
            return Ok(());
        }
        self.inner.storage_set(k, key, v)
    }
    fn storage_remove(&mut self, k: StorageKind, key: &str) {
        if k == StorageKind::Local {
            self.local.borrow_mut().remove(key);
            return;
        }
        self.inner.storage_remove(k, key)
    }
    fn storage_keys(&mut self, k: StorageKind, prefix: &str) -> Vec<String> {
        if k == StorageKind::Local {
            return self
                .local
                .borrow()
                .keys()
                .filter(|x| x.starts_with(prefix))
                .cloned()
                .collect();
        }
        self.inner.storage_keys(k, prefix)
    }
}

const NO_IDB: &str = "UnknownError: IndexedDB unavailable";

/// Two tabs of one origin without IndexedDB (a private window), on one scope: tab A pays,
/// learns with the lock that IndexedDB fails, stores its pending try in localStorage and
/// sends it; tab B, opened then, reads the same key there. Also the flag that makes
/// localStorage refuse writes from then on (its quota), and that key.
fn two_tabs_without_indexeddb() -> (Scope<Tab>, Scope<Tab>, Rc<Cell<bool>>, String) {
    let local = Rc::new(RefCell::new(BTreeMap::new()));
    let full = Rc::new(Cell::new(false));
    let tab = |seed: u64| Tab {
        inner: TestHost {
            now: 10.0,
            seed,
            maps: BTreeMap::new(),
        },
        local: local.clone(),
        full: full.clone(),
    };
    let mut a = Scope::open(tab(1), options().into(), false);
    let key = a.record().key.clone();
    drain(&mut a);
    let started = a.submit("{}".into(), "fp".into(), Rc::new(options()));
    assert!(matches!(started, Submitted::Started(_)), "{started:?}");
    drain(&mut a);
    a.handle(Input::LockGranted);
    drain(&mut a);
    a.handle(Input::IdbRead(Err(NO_IDB.into())));
    assert_eq!(sent(&drain(&mut a)).unwrap().key_value, key);
    let mut b = Scope::open(tab(2), options().into(), false);
    drain(&mut b);
    assert_eq!(b.record().key, key);
    (a, b, full, key)
}

/// Tab A's try and its five retries get no answer (`outcome-unknown`): A lets the lock go.
fn no_answer_to_any_try(a: &mut Scope<Tab>) {
    a.handle(Input::NoAnswer(NoAnswer::Network));
    drain(a);
    for _ in 0..5 {
        a.handle(Input::Woken(Wake::Retry));
        drain(a);
        a.handle(Input::NoAnswer(NoAnswer::Network));
    }
    assert!(drain(a).contains(&Command::Unlock));
}

/// Tab A pays and its answer is too large for localStorage; tab B, whose user pressed Pay
/// for the same order meanwhile, resolves from the stored answer or sends the order's key
/// again: never a new key.
#[test]
fn an_answer_local_storage_refuses_leaves_the_waiting_tab_the_orders_key() {
    let (mut a, mut b, full, key) = two_tabs_without_indexeddb();
    let send = Rc::new(options());
    // B's user presses Pay for the same order: B waits for the lock.
    assert!(matches!(
        b.submit("{}".into(), "fp".into(), send),
        Submitted::Started(_)
    ));
    drain(&mut b);
    // The charge is made; its answer does not fit in localStorage.
    full.set(true);
    a.handle(Input::Answer(Answer {
        status: 201,
        body: "x".repeat(100),
        retry_after: None,
        replayed: None,
    }));
    let cmds = drain(&mut a);
    assert!(cmds.contains(&Command::Unlock), "{cmds:?}");
    // B gets the lock (A released it); B has no IndexedDB either.
    b.handle(Input::LockGranted);
    drain(&mut b);
    b.handle(Input::IdbRead(Err(NO_IDB.into())));
    let cmds = drain(&mut b);
    let settled_from_cache = cmds.iter().any(|c| {
        matches!(
            c,
            Command::Settle {
                outcome: Ok(Reply {
                    from_cache: true,
                    ..
                }),
                ..
            }
        )
    });
    let resent = sent(&cmds).map(|r| r.key_value.clone());
    assert!(
        settled_from_cache || resent.as_deref() == Some(key.as_str()),
        "tab B sent the same order under another key: {resent:?} (the order's key was {key})"
    );
}

/// localStorage is full when tab A stores its retries, which get no answer
/// (`outcome-unknown`); tab B, next with the lock, sends the order's key again.
#[test]
fn a_retry_local_storage_refuses_leaves_the_next_tab_the_orders_key() {
    let (mut a, mut b, full, key) = two_tabs_without_indexeddb();
    full.set(true);
    let send = Rc::new(options());
    b.submit("{}".into(), "fp".into(), send);
    drain(&mut b);
    // A's try gets no answer (the charge may have been made): outcome-unknown.
    no_answer_to_any_try(&mut a);
    b.handle(Input::LockGranted);
    drain(&mut b);
    b.handle(Input::IdbRead(Err(NO_IDB.into())));
    let resent = sent(&drain(&mut b)).map(|r| r.key_value.clone());
    assert_eq!(
        resent.as_deref(),
        Some(key.as_str()),
        "the unknown outcome's key was replaced"
    );
}

/// Tab A's record fell back to its sessionStorage (no IndexedDB, localStorage full): its
/// next submit takes its tab's own lock and sends its key; a copy of another tab's record
/// in localStorage arrives meanwhile. A goes on showing the key it sends (P-key-stable).
#[test]
fn a_tab_sending_under_its_own_lock_does_not_show_another_tabs_copy() {
    let (mut a, _b, full, key) = two_tabs_without_indexeddb();
    full.set(true);
    no_answer_to_any_try(&mut a);
    a.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut a);
    let own = Command::Wake {
        ms: 0.0,
        wake: Wake::OwnLock,
    };
    assert!(cmds.contains(&own), "{cmds:?}");
    a.handle(Input::Woken(Wake::OwnLock));
    assert_eq!(
        sent(&drain(&mut a)).map(|r| r.key_value.clone()),
        Some(key.clone())
    );
    let mut other = crate::core::record::Record::new(
        "22222222-2222-4222-8222-222222222222",
        "cart-1",
        50.0,
        86_400_000.0,
    );
    other.state = State::Pending;
    other.attempts = 1;
    other.fingerprint = Some("fp".into());
    a.handle(Input::StorageEvent(Some(other.encode())));
    drain(&mut a);
    assert_eq!(
        a.record().key,
        key,
        "shows another tab's key while sending its own"
    );
    a.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut a);
    a.handle(Input::Woken(Wake::Retry));
    assert_eq!(sent(&drain(&mut a)).map(|r| r.key_value.clone()), Some(key));
}

/// A tab whose localStorage is full pays: its record's copy lives in sessionStorage. Its
/// submit resolves with the answer once that copy has it, as with localStorage, not once
/// IndexedDB has it: a tab the browser froze while it read there holds that write up
/// until it is shown again, which would keep the answer from the customer past the
/// deadline. The lock goes once the write is made. [P-wait-bounded] [P-answer-then-lock]
#[test]
fn an_answer_whose_write_a_frozen_tab_holds_up_resolves_at_once_and_once() {
    let tab = Tab {
        inner: TestHost::default(),
        local: Rc::new(RefCell::new(BTreeMap::new())),
        full: Rc::new(Cell::new(true)),
    };
    let mut s = Scope::open(tab, options().into(), false);
    drain(&mut s);
    let started = s.submit("{}".into(), "fp".into(), Rc::new(options()));
    assert!(matches!(started, Submitted::Started(1)), "{started:?}");
    drain(&mut s);
    s.handle(Input::LockGranted);
    drain(&mut s);
    s.handle(Input::IdbRead(Ok(None)));
    drain(&mut s);
    s.handle(Input::IdbWritten(Ok(())));
    assert!(sent(&drain(&mut s)).is_some());
    s.handle(answer(201, None));
    let mut cmds = drain(&mut s);
    s.handle(Input::Woken(Wake::AnswerTurn));
    cmds.extend(drain(&mut s));
    assert!(
        matches!(settled_with(&cmds).as_slice(), [Ok(r)] if r.status == 201),
        "the answer, before IndexedDB has it: {cmds:?}"
    );
    assert!(
        cmds.iter().any(|c| matches!(c, Command::IdbPut { .. })),
        "{cmds:?}"
    );
    assert!(!cmds.contains(&Command::Unlock), "{cmds:?}");
    // The write waits behind the frozen tab; the deadline's timer runs, then the frozen
    // tab is shown again and the write is made: the lock goes, nothing more settles.
    s.handle(Input::Woken(Wake::Deadline(1)));
    let mut cmds = drain(&mut s);
    s.handle(Input::IdbWritten(Ok(())));
    cmds.extend(drain(&mut s));
    assert!(settled_with(&cmds).is_empty(), "{cmds:?}");
    assert!(cmds.contains(&Command::Unlock), "{cmds:?}");
}

/// The outcomes `cmds` settle submits with.
fn settled_with(cmds: &[Command]) -> Vec<&Result<Reply, Error>> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Settle { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect()
}
