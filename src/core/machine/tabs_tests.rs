//! Host tests of two tabs of one scope, each a machine over its own Web Storage copy, with
//! IndexedDB (the record every tab shares) played by hand: `finish()` in one tab while
//! another tab pays.

use super::*;
use crate::core::record::Record;

/// Tab A with the scope's key settled (IndexedDB holds it) and tab B opened after it,
/// showing the same key from the origin's localStorage; and what IndexedDB holds.
fn two_tabs() -> (Scope<TestHost>, Scope<TestHost>, Option<String>) {
    let (a, idb) = settled(TestHost::default());
    let host = TestHost {
        now: 100.0,
        seed: 7,
        maps: a.host.maps.clone(),
    };
    let mut b = Scope::open(host, options().into(), false);
    drain(&mut b);
    assert_eq!(b.record().key, a.record().key);
    (a, b, idb)
}

/// Tab `s` is answered 201 and stores the answer in IndexedDB (`idb`).
fn paid(s: &mut Scope<TestHost>, idb: &mut Option<String>) {
    s.handle(answer(201, None));
    drain(s);
    s.handle(Input::Woken(Wake::AnswerTurn));
    commit(idb, &drain(s));
    s.handle(Input::IdbWritten(Ok(())));
    drain(s);
}

/// Tab `s`'s `finish()` or `reset()` gets the lock and reads `idb`: what it writes there.
fn clean_up(s: &mut Scope<TestHost>, idb: &mut Option<String>) {
    s.handle(Input::LockGranted);
    drain(s);
    s.handle(Input::IdbRead(Ok(idb.clone())));
    let cmds = drain(s);
    commit(idb, &cmds);
    if cmds.iter().any(|c| matches!(c, Command::IdbPut { .. })) {
        s.handle(Input::IdbWritten(Ok(())));
        drain(s);
    }
}

/// The user moves on to the next order in tab A (`finish()`), whose clean-up waits for the
/// lock; tab B, which has not heard of it and still shows the key A gave up (never sent),
/// pays the next order under it and is charged. A's clean-up must not forget that charge:
/// the next Pay of that order, in any tab, would send a new key and charge again.
#[test]
fn finish_in_one_tab_keeps_the_next_order_another_tab_paid_under_the_key_it_gave_up() {
    let (mut a, mut b, mut idb) = two_tabs();
    let key = a.record().key.clone();
    a.host.now = 1000.0;
    a.finish();
    drain(&mut a);
    b.host.now = 2000.0;
    assert_eq!(
        sent(&first_try(&mut b, &mut idb, options()))
            .unwrap()
            .key_value,
        key
    );
    paid(&mut b, &mut idb);
    clean_up(&mut a, &mut idb);
    let stored = idb.as_deref().map(Record::decode).transpose().unwrap();
    let stored = stored.expect("the record of the next order's charge was removed");
    assert_eq!(
        (stored.key.as_str(), stored.state),
        (key.as_str(), State::Succeeded)
    );
    assert_eq!(a.record().key, key, "tab A shows the next order's attempt");
    assert_eq!(a.record().state, State::Succeeded);
}

/// The same race, but B's Pay was pressed before A's `finish()` (it waited for the lock):
/// that is the order A ended, and A's clean-up gives its key up as before.
#[test]
fn finish_still_gives_up_the_key_of_a_pay_pressed_before_it_in_another_tab() {
    let (mut a, mut b, mut idb) = two_tabs();
    b.host.now = 500.0;
    let started = b.submit("{}".into(), "fp".into(), Rc::new(options()));
    assert!(matches!(started, Submitted::Started(_)));
    drain(&mut b);
    a.host.now = 1000.0;
    a.finish();
    drain(&mut a);
    b.host.now = 2000.0;
    b.handle(Input::LockGranted);
    drain(&mut b);
    b.handle(Input::IdbRead(Ok(idb.clone())));
    commit(&mut idb, &drain(&mut b));
    b.handle(Input::IdbWritten(Ok(())));
    assert!(sent(&drain(&mut b)).is_some());
    paid(&mut b, &mut idb);
    clean_up(&mut a, &mut idb);
    assert_eq!(idb, None, "the attempt A saw is forgotten");
    assert_eq!(a.record().state, State::Fresh);
}

/// A record whose `submittedAt` is not a time (edited by hand, another program) is not
/// trusted and not lost: set aside as it was, with a `storage-corrupt` event.
#[test]
fn a_record_with_a_wrong_submitted_at_is_set_aside_whole() {
    let (a, _) = settled(TestHost::default());
    let mut maps = a.host.maps.clone();
    let at = (StorageKind::Local as u8, String::from("idemkey:v1:cart-1"));
    let text = maps[&at].replace(r#""submittedAt":0"#, r#""submittedAt":"soon""#);
    maps.insert(at.clone(), text.clone());
    let mut b = Scope::open(
        TestHost {
            now: 100.0,
            seed: 7,
            maps,
        },
        options().into(),
        false,
    );
    let cmds = drain(&mut b);
    let Some(q) = cmds.iter().find_map(|c| match c {
        Command::Emit(Event {
            kind:
                EventKind::StorageCorrupt {
                    reason,
                    quarantine_key,
                },
            ..
        }) => Some((reason.clone(), quarantine_key.clone())),
        _ => None,
    }) else {
        panic!("no storage-corrupt event: {cmds:?}")
    };
    assert!(q.0.ends_with("field `submittedAt`: wrong type"), "{}", q.0);
    let kept = &b.host.maps[&(StorageKind::Local as u8, q.1)];
    assert_eq!(*kept, text);
    assert_ne!(b.record().key, a.record().key);
}

/// Every command `s` gives, the deadline timers included.
fn all(s: &mut Scope<TestHost>) -> Vec<Command> {
    core::iter::from_fn(|| s.poll()).collect()
}

/// Another tab holds the scope's lock and does not let go (its JavaScript frozen in the
/// background): a submit here waits no longer than its `deadlineMs`, then rejects with
/// `outcome-unknown`, reason `another-tab`, having sent nothing; the lock, granted later
/// with nothing left to do, is released at once, and the next submit pays.
#[test]
fn a_submit_waits_for_another_tabs_lock_no_longer_than_its_deadline() {
    let (mut b, mut idb) = settled(TestHost::default());
    let mut o = options();
    o.deadline_ms = 3_000;
    let started = b.submit("{}".into(), "fp".into(), Rc::new(o));
    assert_eq!(started, Submitted::Started(1));
    let cmds = all(&mut b);
    assert!(
        cmds.iter().any(|c| matches!(c, Command::Lock { .. })),
        "{cmds:?}"
    );
    assert!(cmds.contains(&Command::Wake {
        ms: 3_000.0,
        wake: Wake::Deadline(1)
    }));
    b.host.now += 3_000.0;
    b.handle(Input::Woken(Wake::Deadline(1)));
    let cmds = all(&mut b);
    let Some(Command::Settle {
        flight: 1,
        outcome: Err(e),
    }) = cmds.first()
    else {
        panic!("{cmds:?}")
    };
    assert_eq!(e.code(), "outcome-unknown");
    assert!(matches!(e, Error::OutcomeUnknown { reason, .. } if reason == "another-tab"));
    assert!(e.message().contains("another tab"), "{}", e.message());
    assert!(sent(&cmds).is_none());
    // The other tab lets go: nothing waits here any more.
    b.handle(Input::LockGranted);
    assert_eq!(all(&mut b), vec![Command::Unlock]);
    // The customer presses Pay again.
    assert!(sent(&first_try(&mut b, &mut idb, options())).is_some());
}

/// The deadline of a submit that holds the lock leaves it to its tries.
#[test]
fn the_deadline_of_a_submit_sending_does_not_end_it_early() {
    let (mut b, mut idb) = settled(TestHost::default());
    assert!(sent(&first_try(&mut b, &mut idb, options())).is_some());
    b.handle(Input::Woken(Wake::Deadline(1)));
    assert!(all(&mut b).is_empty());
    b.handle(answer(201, None));
    assert!(all(&mut b).iter().any(|c| matches!(
        c,
        Command::Settle {
            outcome: Ok(Reply { status: 201, .. }),
            ..
        }
    )));
}
