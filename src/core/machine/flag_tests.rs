//! Host tests of the flag that a scope has ended attempts in a backend
//! (`<ns>:ends:<scope>`): a page lists the scope's marks only where it is, so each end
//! writes it before its mark, in the backend that takes the mark, and the sweep keeps it
//! while a mark of the scope is there. Another tab's writes are put straight into this
//! tab's Web Storage map, as localStorage hands them over, with no channel notice.

use super::*;

/// Tab `b` pays the basket, as the browser would run its commands (IndexedDB holding
/// `idb`, the lock granted, wakes due, a try answered 201): the key its try went out
/// under (`Ok`), or the answer it resolved with from storage (`Err`).
fn pay(b: &mut Scope<TestHost>, idb: &mut Option<String>) -> Result<String, Reply> {
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(b);
    let mut seen = run(b, idb, cmds);
    let tried = sent(&seen).map(|r| r.key_value.clone());
    if tried.is_some() {
        b.handle(answer(201, None));
        let cmds = drain(b);
        seen.extend(run(b, idb, cmds));
    }
    let settled = seen.into_iter().find_map(|c| match c {
        Command::Settle { outcome: Ok(r), .. } => Some(r),
        _ => None,
    });
    tried.ok_or_else(|| settled.expect("neither sent nor answered"))
}

// P-finish-durable: another tab's finish() that reaches this tab's localStorage, with no
// notice, is heard by the next submit here: the next order pays under a new key. The
// same once the origin's storage was cleared and another tab's end came after.
#[test]
fn a_mark_another_tab_wrote_with_its_flag_is_heard_at_the_next_submit() {
    let (mut a, mut b, mut idb) = two_tabs();
    let key = a.record().key.clone();
    assert!(a.finish());
    let flag = (StorageKind::Local as u8, "idemkey:ends:cart-1".to_string());
    assert!(a.host.maps.contains_key(&flag), "finish() wrote no flag");
    hand_over(&a, &mut b, ":end");
    let next = pay(&mut b, &mut idb).expect("the next order was answered from storage");
    assert_ne!(next, key);
    // Tab C shows that order's attempt; the origin's storage is cleared (no flag, no mark
    // left); then C finishes it.
    let host = TestHost {
        now: 300.0,
        seed: 11,
        maps: b.host.maps.clone(),
    };
    let mut c = Scope::open(host, options().into(), false);
    drain(&mut c);
    assert_eq!(c.record().key, next);
    b.host.maps.clear();
    c.host.maps.clear();
    assert!(c.finish());
    hand_over(&c, &mut b, ":end");
    let after = pay(&mut b, &mut idb).expect("answered from the attempt C finished");
    assert_ne!(after, next);
}

/// A mark whose flag is gone (its entry removed by hand, say) is not listed, but a submit
/// reads the marks of the record's copies in Web Storage by their own entries: a tab that
/// shows the attempt another tab finished, its mark there without the flag, pays the next
/// order under a new key, and writes the flag again. [P-finish-durable]
#[test]
fn a_mark_without_its_flag_is_heard_by_the_entry_of_the_copy_a_submit_reads() {
    let (mut a, mut b, mut idb) = two_tabs();
    let key = a.record().key.clone();
    a.finish();
    hand_over(&a, &mut b, ":ended:");
    assert_eq!(b.record().key, key, "B has not heard of the end");
    let next = pay(&mut b, &mut idb).expect("answered from the attempt A finished");
    assert_ne!(next, key);
    assert!(
        b.host.maps.keys().any(|(_, k)| k.contains(":ends:")),
        "the flag written again"
    );
}

/// A host whose localStorage refuses to store the scope's flag (its quota: the shop's own
/// data filled it) and takes anything else.
struct NoFlag(TestHost);

impl Host for NoFlag {
    fn now_ms(&mut self) -> f64 {
        self.0.now_ms()
    }
    fn fill_random(&mut self, out: &mut [u8]) {
        self.0.fill_random(out)
    }
    fn web_locks(&mut self) -> bool {
        true
    }
    fn storage_usable(&mut self, k: StorageKind) -> Result<bool, String> {
        self.0.storage_usable(k)
    }
    fn storage_get(&mut self, k: StorageKind, key: &str) -> Result<Option<String>, String> {
        self.0.storage_get(k, key)
    }
    fn storage_set(&mut self, k: StorageKind, key: &str, v: &str) -> Result<(), String> {
        if k == StorageKind::Local && key.contains(":ends:") {
            return Err("QuotaExceededError: the quota has been exceeded".into());
        }
        self.0.storage_set(k, key, v)
    }
    fn storage_remove(&mut self, k: StorageKind, key: &str) {
        self.0.storage_remove(k, key)
    }
    fn storage_keys(&mut self, k: StorageKind, prefix: &str) -> Vec<String> {
        self.0.storage_keys(k, prefix)
    }
}

// P-end-not-durable: where localStorage refuses the flag, the mark goes down the chain
// with it (to sessionStorage, which no other tab reads): none is left in localStorage
// without its flag, and finish() says the end is not durable, with its event.
#[test]
fn a_refused_flag_takes_the_mark_down_the_chain_and_the_end_is_not_durable() {
    let mut s = Scope::open(NoFlag(TestHost::default()), options().into(), false);
    drain(&mut s);
    let key = s.record().key.clone();
    assert!(!s.finish());
    let cmds = drain(&mut s);
    assert!(
        cmds.iter().any(|c| matches!(
            c,
            Command::Emit(Event {
                kind: EventKind::StorageFallback { .. },
                ..
            })
        )),
        "{cmds:?}"
    );
    let at = |kind: StorageKind, k: &str| s.host.0.maps.contains_key(&(kind as u8, k.into()));
    let mark = format!("idemkey:ended:cart-1:{key}");
    let flag = "idemkey:ends:cart-1";
    assert!(!at(StorageKind::Local, &mark) && !at(StorageKind::Local, flag));
    assert!(at(StorageKind::Session, &mark) && at(StorageKind::Session, flag));
}

/// What a flag holds is not read: an unreadable one still has the marks beside it listed,
/// and the sweep of a later page keeps it while a mark of the scope is there and deletes
/// it once none is. Nothing is lost either way.
#[test]
fn an_unreadable_flag_still_flags_and_is_swept_only_once_no_mark_is_left() {
    let (mut a, mut b, mut idb) = two_tabs();
    let key = a.record().key.clone();
    a.finish();
    hand_over(&a, &mut b, ":end");
    let flag = (StorageKind::Local as u8, "idemkey:ends:cart-1".to_string());
    for bad in ["", "{not a mark", "\u{0}\u{ffff}", "garbage 1 2"] {
        let mut later = TestHost {
            now: 200.0,
            seed: 9,
            maps: b.host.maps.clone(),
        };
        later.maps.insert(flag.clone(), bad.into());
        // A later page's sweep keeps it (the mark is there), and its Pay is the next
        // order's: the mark beside it was listed.
        let mut p = Scope::open(later, options().into(), true);
        drain(&mut p);
        assert_eq!(p.host.maps.get(&flag).map(String::as_str), Some(bad));
        let next = pay(&mut p, &mut idb.clone()).expect("answered from the attempt A finished");
        assert_ne!(next, key, "flag {bad:?}");
    }
    // Every key named expired: a later page's sweep deletes the mark and keeps the flag,
    // listed beside it; the next page's sweep deletes the flag.
    let expired = |maps: &BTreeMap<(u8, String), String>| TestHost {
        now: 4e15,
        seed: 13,
        maps: maps.clone(),
    };
    b.host.maps.insert(flag.clone(), "garbage".into());
    let p = Scope::open(expired(&b.host.maps), options().into(), true);
    assert!(p.host.maps.keys().all(|(_, k)| !k.contains(":ended:")));
    assert!(p.host.maps.contains_key(&flag));
    let p = Scope::open(expired(&p.host.maps), options().into(), true);
    assert!(
        !p.host.maps.contains_key(&flag),
        "the flag outlived its marks"
    );
    drop(idb.take());
}
