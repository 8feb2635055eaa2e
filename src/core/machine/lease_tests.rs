//! Host tests of the storage lease that stands in for Web Locks, with IndexedDB played by
//! hand as the browser runs it: a lease's write lands in its read's transaction, before
//! any other tab's transaction; and each tab's localStorage never reaches the other (the
//! lag under which two tabs once both held the lease).

use super::*;
use crate::core::lease::{Lease, LEASE_RENEW_MS};

const LEASE: &str = "idemkey:lease:cart-1";
const RECORD: &str = "idemkey:v1:cart-1";

/// A page without Web Locks, opened at `now` with its own localStorage, its settle job
/// asking for the lease.
fn tab(now: f64, seed: u64) -> Scope<NoLocks> {
    let host = NoLocks(TestHost {
        now,
        seed,
        ..TestHost::default()
    });
    let mut s = Scope::open(host, &options(), false);
    drain(&mut s);
    s.handle(Input::Woken(Wake::SettleTurn));
    s
}

/// IndexedDB answers `s`'s lease read from `idb`; the write `s` asks for at once goes into
/// the same transaction. The commands after the write's answer.
fn lease_round(s: &mut Scope<NoLocks>, idb: &mut BTreeMap<String, String>) -> Vec<Command> {
    s.handle(Input::LeaseRead(Ok(idb.get(LEASE).cloned())));
    let cmds = drain(s);
    let Some(Command::LeasePut { key, text }) = cmds.last().cloned() else {
        return cmds;
    };
    assert_eq!(key, LEASE);
    match text {
        Some(t) => idb.insert(key, t),
        None => idb.remove(&key),
    };
    s.handle(Input::LeaseWritten(Ok(())));
    drain(s)
}

fn reads_record(cmds: &[Command]) -> bool {
    cmds.contains(&Command::IdbGet { key: RECORD.into() })
}

#[test]
fn without_web_locks_the_lease_is_taken_and_released_in_indexeddb() {
    let mut s = tab(0.0, 1);
    let mut idb = BTreeMap::new();
    assert_eq!(drain(&mut s), [Command::LeaseGet { key: LEASE.into() }]);
    let cmds = lease_round(&mut s, &mut idb);
    assert!(
        reads_record(&cmds),
        "held: the settle job reads the record: {cmds:?}"
    );
    assert!(cmds.contains(&Command::Wake {
        ms: LEASE_RENEW_MS as f64,
        wake: Wake::LeaseRenew(0)
    }));
    assert!(Lease::decode(&idb[LEASE]).is_some());
    s.handle(Input::IdbRead(Ok(None)));
    drain(&mut s);
    s.handle(Input::IdbWritten(Ok(())));
    let cmds = drain(&mut s);
    assert_eq!(
        cmds.last(),
        Some(&Command::LeaseGet { key: LEASE.into() }),
        "released"
    );
    assert!(s.busy(), "kept until the lease is deleted");
    lease_round(&mut s, &mut idb);
    assert!(!idb.contains_key(LEASE), "the lease is released");
    assert!(!s.busy());
    let local = (StorageKind::Local as u8, LEASE.to_string());
    assert!(!s.host.0.maps.contains_key(&local), "no Web Storage lease");
}

/// Two tabs ask at once; localStorage would tell neither of the other's lease in time.
/// IndexedDB runs A's transaction first: B reads A's lease and waits until A releases it.
#[test]
fn two_tabs_never_both_hold_the_lease_however_late_local_storage_is() {
    let mut idb = BTreeMap::new();
    let (mut a, mut b) = (tab(0.0, 1), tab(0.0, 2));
    drain(&mut a);
    drain(&mut b);
    assert!(reads_record(&lease_round(&mut a, &mut idb)), "A holds it");
    let cmds = lease_round(&mut b, &mut idb);
    assert!(!reads_record(&cmds), "B must not hold it too: {cmds:?}");
    assert!(matches!(
        cmds.as_slice(),
        [Command::Wake {
            wake: Wake::LeasePoll,
            ..
        }]
    ));
    b.host.0.now = 150.0;
    b.handle(Input::Woken(Wake::LeasePoll));
    drain(&mut b);
    assert!(!reads_record(&lease_round(&mut b, &mut idb)), "still A's");
    a.handle(Input::IdbRead(Ok(None)));
    drain(&mut a);
    a.handle(Input::IdbWritten(Ok(())));
    drain(&mut a);
    lease_round(&mut a, &mut idb);
    b.host.0.now = 300.0;
    b.handle(Input::Woken(Wake::LeasePoll));
    drain(&mut b);
    assert!(
        reads_record(&lease_round(&mut b, &mut idb)),
        "B's turn once A released it"
    );
}

/// A lease write that could not go into its read's transaction (it had ended) did not
/// happen: the tab does not hold the lease and looks again.
#[test]
fn a_lease_write_outside_its_read_is_not_a_lease_held() {
    let mut s = tab(0.0, 1);
    drain(&mut s);
    s.handle(Input::LeaseRead(Ok(None)));
    assert!(matches!(
        drain(&mut s).as_slice(),
        [Command::LeasePut { .. }]
    ));
    s.handle(Input::LeaseWritten(Err("TransactionInactiveError".into())));
    let cmds = drain(&mut s);
    assert!(!reads_record(&cmds), "{cmds:?}");
    assert!(matches!(
        cmds.as_slice(),
        [Command::Wake {
            wake: Wake::LeasePoll,
            ..
        }]
    ));
}

/// A holder whose lease lapsed (its renewals throttled) and was taken by another tab
/// neither renews nor deletes that tab's lease.
#[test]
fn a_lapsed_holder_leaves_the_lease_another_tab_took() {
    let mut idb = BTreeMap::new();
    let mut a = tab(0.0, 1);
    drain(&mut a);
    lease_round(&mut a, &mut idb);
    let theirs = Lease::new("other-tab", 20_000.0).encode();
    idb.insert(LEASE.into(), theirs.clone());
    a.host.0.now = 20_001.0;
    a.handle(Input::Woken(Wake::LeaseRenew(0)));
    assert!(drain(&mut a).contains(&Command::LeaseGet { key: LEASE.into() }));
    let cmds = lease_round(&mut a, &mut idb);
    assert!(!cmds.iter().any(|c| matches!(c, Command::LeasePut { .. })));
    assert_eq!(idb[LEASE], theirs, "not renewed over");
    a.handle(Input::IdbRead(Ok(None)));
    drain(&mut a);
    a.handle(Input::IdbWritten(Ok(())));
    drain(&mut a);
    lease_round(&mut a, &mut idb);
    assert_eq!(idb[LEASE], theirs, "not released either");
    assert!(!a.busy());
}

/// Without IndexedDB (the first read of the lease fails), the record and the lease move
/// to Web Storage: the scope is not left waiting for a lease it can never read.
#[test]
fn a_failed_lease_read_falls_back_to_the_web_storage_lease() {
    let mut s = tab(0.0, 1);
    drain(&mut s);
    s.handle(Input::LeaseRead(Err("IndexedDB unavailable".into())));
    let cmds = drain(&mut s);
    assert!(cmds.iter().any(|c| matches!(
        c,
        Command::Emit(Event {
            kind: EventKind::StorageFallback { .. },
            ..
        })
    )));
    let local = (StorageKind::Local as u8, LEASE.to_string());
    s.host.0.now = 200.0;
    s.handle(Input::Woken(Wake::LeasePoll));
    drain(&mut s);
    assert!(
        s.host.0.maps.contains_key(&local),
        "the Web Storage lease is written"
    );
    s.host.0.now = 225.0;
    s.handle(Input::Woken(Wake::LeasePoll));
    let cmds = drain(&mut s);
    assert!(
        !reads_record(&cmds),
        "IndexedDB is not read any more: {cmds:?}"
    );
    let record = (StorageKind::Local as u8, RECORD.to_string());
    assert!(
        s.host.0.maps.contains_key(&record),
        "held: the key is settled in Web Storage"
    );
    assert!(
        !s.host.0.maps.contains_key(&local),
        "and the lease released"
    );
    assert!(!s.busy());
}

/// The lease is read for one op at a time: a release and the next take asked for while a
/// take is answered wait their turn (each answer belongs to the op that asked).
#[test]
fn one_lease_read_at_a_time() {
    let mut idb = BTreeMap::new();
    let mut s = tab(0.0, 1);
    drain(&mut s);
    // A submit while the settle job waits for the lease: once held, the settle job gives
    // it back and the submit asks for it anew.
    let _ = s.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut s);
    let cmds = lease_round(&mut s, &mut idb);
    let reads = cmds
        .iter()
        .filter(|c| matches!(c, Command::LeaseGet { .. }))
        .count();
    assert_eq!(reads, 1, "{cmds:?}");
    // The release's answer deletes the settle job's lease; then the submit's take.
    assert!(!reads_record(&lease_round(&mut s, &mut idb)));
    assert!(!idb.contains_key(LEASE));
    assert!(
        reads_record(&lease_round(&mut s, &mut idb)),
        "the submit holds it"
    );
}
