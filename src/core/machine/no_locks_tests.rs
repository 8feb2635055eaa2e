//! Host tests of a page without Web Locks (an insecure `http://` origin, a browser from
//! before 2022): the record is the tab's own, as with `storage: "session"`, said once by a
//! `storage-fallback` event; refreshes, double-clicks and retries stay safe.

use super::*;

fn no_locks() -> NoLocks {
    NoLocks(TestHost::default())
}

/// Every command `s` gives, the deadline timers included.
fn all(s: &mut Scope<NoLocks>) -> Vec<Command> {
    core::iter::from_fn(|| s.poll()).collect()
}

#[test]
fn without_web_locks_local_acts_as_session_with_one_event_naming_web_locks() {
    let mut s = Scope::open(no_locks(), options().into(), false);
    let cmds = all(&mut s);
    let fallbacks: Vec<_> = cmds
        .iter()
        .filter_map(|c| match c {
            Command::Emit(Event {
                kind: EventKind::StorageFallback { from, to, reason },
                ..
            }) => Some((*from, *to, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(fallbacks.len(), 1, "{cmds:?}");
    assert_eq!((fallbacks[0].0, fallbacks[0].1), ("local", "session"));
    assert!(fallbacks[0].2.contains("Web Locks"), "{}", fallbacks[0].2);
    assert_eq!(s.storage(), StorageKind::Session);
    // Nothing shared: no channel, no lock, no IndexedDB.
    assert!(
        cmds.iter().all(|c| !matches!(
            c,
            Command::Listen { .. } | Command::Lock { .. } | Command::IdbGet { .. }
        )),
        "{cmds:?}"
    );
    // The key is the tab's at once: a refresh of the tab shows it again.
    let key = s.record().key.clone();
    let again = Scope::open(
        NoLocks(TestHost {
            maps: s.host.0.maps.clone(),
            ..TestHost::default()
        }),
        options().into(),
        false,
    );
    assert_eq!(again.record().key, key);
}

#[test]
fn without_web_locks_a_submit_takes_the_tabs_own_turn_and_sends_its_key_once() {
    let mut s = Scope::open(no_locks(), options().into(), false);
    all(&mut s);
    let key = s.record().key.clone();
    assert_eq!(
        s.submit("{}".into(), "fp".into(), Rc::new(options())),
        Submitted::Started(1)
    );
    // A double-click joins it.
    assert_eq!(
        s.submit("{}".into(), "fp".into(), Rc::new(options())),
        Submitted::Joined(1)
    );
    let cmds = all(&mut s);
    assert!(cmds.contains(&Command::Wake {
        ms: 0.0,
        wake: Wake::OwnLock
    }));
    assert!(!cmds.iter().any(|c| matches!(c, Command::Lock { .. })));
    s.handle(Input::Woken(Wake::OwnLock));
    let cmds = all(&mut s);
    let Some(Command::Send(r)) = cmds.iter().find(|c| matches!(c, Command::Send(_))) else {
        panic!("{cmds:?}")
    };
    assert_eq!(r.key_value, key);
    // Stored before it left: pending in sessionStorage.
    let stored = s
        .host
        .0
        .maps
        .get(&(StorageKind::Session as u8, s.rec_key().into()))
        .cloned();
    assert!(stored.is_some_and(|t| t.contains(&key) && t.contains("pending")));
    s.handle(answer(201, None));
    let cmds = all(&mut s);
    assert!(cmds.iter().any(|c| matches!(
        c,
        Command::Settle {
            flight: 1,
            outcome: Ok(Reply { status: 201, .. })
        }
    )));
    assert_eq!(s.record().state, State::Succeeded);
    assert!(!cmds.iter().any(|c| matches!(c, Command::Unlock)));
}

#[test]
fn a_web_lock_the_browser_refuses_makes_the_record_the_tabs_own() {
    let (mut s, mut idb) = settled(TestHost::default());
    s.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut s);
    s.handle(Input::LockRefused(
        "SecurityError: locks are not allowed".into(),
    ));
    let cmds = drain(&mut s);
    assert!(
        cmds.iter().any(|c| matches!(
            c,
            Command::Emit(Event {
                kind: EventKind::StorageFallback {
                    from: "local",
                    to: "session",
                    ..
                },
                ..
            })
        )),
        "{cmds:?}"
    );
    assert_eq!(s.storage(), StorageKind::Session);
    commit(&mut idb, &cmds);
    assert!(sent(&cmds).is_some(), "{cmds:?}");
}
