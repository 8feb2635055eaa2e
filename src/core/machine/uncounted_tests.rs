//! Host tests of a tab whose IndexedDB failed: what it stores carries no count (`rev` 0),
//! and the other tabs order its attempts against IndexedDB's by the rules for such copies.

use super::*;
use crate::core::record::{Record, StoredResponse};

/// A refused attempt of the basket (`fp`), begun at 0, stored `rev` times.
fn refused(rev: u64) -> Record {
    let mut r = Record::new(
        "11111111-1111-4111-8111-111111111111",
        "cart-1",
        0.0,
        86_400_000.0,
    );
    r.rev = rev;
    r.fingerprint = Some("fp".into());
    r.state = State::Failed;
    r.attempts = 1;
    r.response = Some(StoredResponse {
        status: 402,
        body: "{}".into(),
        replayed: false,
    });
    r
}

// 1386100 and 1570292: tab A's IndexedDB read failed; it paid the basket under a new key,
// its record in localStorage alone, counted on from its own uncounted copies there (from 0)
// where IndexedDB held a refused attempt of the basket counted higher. Tab B, shown A's paid
// attempt, took it for the earlier one by the count, went on from the refused one and sent
// a new key. Uncounted, A's paid attempt is the later (a refused attempt never wins over
// another), and B's Pay is answered from it.
#[test]
fn a_tab_without_indexeddb_pays_and_another_tab_takes_its_attempt_for_the_later() {
    let (mut a, _) = settled(TestHost::default());
    a.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut a);
    a.handle(Input::LockGranted);
    drain(&mut a);
    a.handle(Input::IdbRead(Err("UnknownError".into())));
    let mut posted: Vec<Command> = drain(&mut a);
    assert!(sent(&posted).is_some(), "{posted:?}");
    a.handle(answer(201, None));
    posted.extend(drain(&mut a));
    let paid = a.record().key.clone();
    let (mut b, _) = settled(TestHost {
        seed: 9,
        ..TestHost::default()
    });
    for c in posted {
        if let Command::Post { text, .. } = c {
            b.handle(Input::Notice(text));
        }
    }
    drain(&mut b);
    assert_eq!(b.record().key, paid);
    let mut idb = Some(refused(3).encode());
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut b);
    let cmds = run(&mut b, &mut idb, cmds);
    assert!(sent(&cmds).is_none(), "the basket went out again: {cmds:?}");
    assert_eq!(b.record().key, paid);
}
