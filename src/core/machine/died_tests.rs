//! Host tests of a tab that died between writing its new attempt's localStorage copy and
//! IndexedDB's write of it: the copy reaches the other tabs, but nothing was ever sent
//! under its key, and the next lock holder stores another attempt in its place.

use super::*;

/// Page `b` hears what another tab posted among `cmds`.
fn hear(b: &mut Scope<TestHost>, cmds: &[Command]) {
    for c in cmds {
        if let Command::Post { text, .. } = c {
            b.handle(Input::Notice(text.clone()));
        }
    }
    drain(b);
}

// P-tabs-one-key: tab C takes the lock and dies after its localStorage copy of a new
// attempt, before IndexedDB's write; tab A then pays the basket under its own key, which
// IndexedDB holds as often stored as C's copy. Tab B hears A's notice and, later, C's copy
// (a `storage` event, which can come after the notice): Pay in B sends A's key, the one
// IndexedDB holds, never C's, under which nothing was sent.
#[test]
fn a_copy_whose_tab_died_before_indexeddbs_write_never_wins_over_the_attempt_stored_there() {
    let (mut a, mut idb) = settled(TestHost::default());
    let mut b = beside(&a);
    let mut c = beside(&a);
    c.host.now = 300.0;
    c.reset();
    drain(&mut c);
    c.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut c);
    c.handle(Input::LockGranted);
    drain(&mut c);
    c.handle(Input::IdbRead(Ok(idb.clone())));
    let died = drain(&mut c);
    let copy = died.iter().find_map(|cmd| match cmd {
        Command::IdbPut { text, .. } => text.clone(),
        _ => None,
    });
    let copy = copy.expect("C asked IndexedDB for no write");
    // A pays; IndexedDB never had C's write.
    let paying = first_try(&mut a, &mut idb, options());
    let key = sent(&paying).expect("A sent nothing").key_value.clone();
    hear(&mut b, &paying);
    assert_eq!(b.record().key, key, "B does not show A's payment");
    b.handle(Input::StorageEvent(Some(copy)));
    drain(&mut b);
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut b);
    let cmds = run(&mut b, &mut idb, cmds);
    let r = sent(&cmds).unwrap_or_else(|| panic!("B sent nothing: {cmds:?}"));
    assert_eq!(
        r.key_value, key,
        "B paid the basket under a key never stored"
    );
}
