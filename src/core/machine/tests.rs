//! Host tests of a scope's machine through its inputs and commands, with a host whose
//! storage is a map and whose clock and randomness are set by the test.

use super::*;
use crate::core::options::{Options, RawOptions, StorageKind};
use crate::core::state::State;
use crate::error::Error;
use alloc::collections::BTreeMap;
use alloc::rc::Rc;

/// A page alone: Web Storage as maps, Web Locks present, a clock the test moves.
#[derive(Default)]
struct TestHost {
    now: f64,
    seed: u64,
    maps: BTreeMap<(u8, String), String>,
}

impl Host for TestHost {
    fn now_ms(&mut self) -> f64 {
        self.now
    }
    fn fill_random(&mut self, out: &mut [u8]) {
        // SplitMix64: every key different.
        for b in out {
            self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *b = (z ^ (z >> 31)) as u8;
        }
    }
    fn web_locks(&mut self) -> bool {
        true
    }
    fn storage_usable(&mut self, _: StorageKind) -> Result<bool, String> {
        Ok(true)
    }
    fn storage_get(&mut self, kind: StorageKind, key: &str) -> Result<Option<String>, String> {
        Ok(self.maps.get(&(kind as u8, key.into())).cloned())
    }
    fn storage_set(&mut self, kind: StorageKind, key: &str, value: &str) -> Result<(), String> {
        self.maps.insert((kind as u8, key.into()), value.into());
        Ok(())
    }
    fn storage_remove(&mut self, kind: StorageKind, key: &str) {
        self.maps.remove(&(kind as u8, key.into()));
    }
    fn storage_keys(&mut self, kind: StorageKind, prefix: &str) -> Vec<String> {
        let k = kind as u8;
        self.maps
            .keys()
            .filter(|(b, key)| *b == k && key.starts_with(prefix))
            .map(|(_, key)| key.clone())
            .collect()
    }
}

fn options() -> Options {
    Options::from_raw(RawOptions {
        scope: Some("cart-1".into()),
        endpoint: Some("/charges".into()),
        ..RawOptions::default()
    })
    .unwrap()
}

/// The commands given, but the deadline timer every submit sets, which only ends a submit
/// still waiting for the lock then (tested on its own, in tabs_tests.rs).
fn drain<H: Host>(s: &mut Scope<H>) -> Vec<Command> {
    core::iter::from_fn(|| s.poll())
        .filter(|c| {
            !matches!(
                c,
                Command::Wake {
                    wake: Wake::Deadline(_),
                    ..
                }
            )
        })
        .collect()
}

#[test]
fn a_submit_stores_its_key_before_the_request_and_settles_with_the_answer() {
    let mut s = Scope::open(TestHost::default(), options().into(), false);
    let key = s.record().key.clone();
    drain(&mut s);
    let send = Rc::new(options());
    assert_eq!(
        s.submit("{}".into(), "fp".into(), send),
        Submitted::Started(1)
    );
    assert!(matches!(drain(&mut s).as_slice(), [Command::Lock { .. }]));
    s.handle(Input::LockGranted);
    assert!(matches!(drain(&mut s).as_slice(), [Command::IdbGet { .. }]));
    s.handle(Input::IdbRead(Ok(None)));
    let cmds = drain(&mut s);
    let Some(Command::IdbPut { text: Some(t), .. }) =
        cmds.iter().find(|c| matches!(c, Command::IdbPut { .. }))
    else {
        panic!("no write before the try: {cmds:?}")
    };
    assert!(t.contains(&key) && t.contains("pending"));
    s.handle(Input::IdbWritten(Ok(())));
    let cmds = drain(&mut s);
    let Some(Command::Send(r)) = cmds.iter().find(|c| matches!(c, Command::Send(_))) else {
        panic!("no try: {cmds:?}")
    };
    assert_eq!(r.key_value, key);
    s.handle(Input::Answer(Answer {
        status: 201,
        body: "{}".into(),
        retry_after: None,
        replayed: None,
    }));
    let cmds = drain(&mut s);
    assert!(cmds.iter().any(|c| matches!(
        c,
        Command::Settle {
            flight: 1,
            outcome: Ok(Reply {
                status: 201,
                from_cache: false,
                ..
            })
        }
    )));
    assert_eq!(s.record().state, State::Succeeded);
}

/// A page that paid the basket (`{}`): 201 stored in IndexedDB (`idb`).
fn paid_page() -> (Scope<TestHost>, Option<String>) {
    let (mut s, mut idb) = settled(TestHost::default());
    first_try(&mut s, &mut idb, options());
    s.handle(answer(201, None));
    drain(&mut s);
    s.handle(Input::Woken(Wake::AnswerTurn));
    commit(&mut idb, &drain(&mut s));
    s.handle(Input::IdbWritten(Ok(())));
    drain(&mut s);
    assert_eq!(s.record().state, State::Succeeded);
    (s, idb)
}

/// Tab A that paid the basket (`{}`: 201 stored in IndexedDB) and tab B opened after it,
/// showing A's attempt from the origin's localStorage (a copy of A's Web Storage); and
/// what IndexedDB holds.
fn two_tabs() -> (Scope<TestHost>, Scope<TestHost>, Option<String>) {
    let (a, idb) = paid_page();
    let b = beside(&a);
    assert_eq!(b.record().key, a.record().key);
    (a, b, idb)
}

/// What tab `from` left in its Web Storage (entries whose key has `part`), written into tab
/// `to`'s, as localStorage hands another tab's writes over.
fn hand_over(from: &Scope<TestHost>, to: &mut Scope<TestHost>, part: &str) {
    for ((kind, k), v) in &from.host.maps {
        if k.contains(part) {
            to.host.maps.insert((*kind, k.clone()), v.clone());
        }
    }
}

/// A tab opened beside tab `a`: its own copy of the origin's Web Storage as `a` left it.
fn beside(a: &Scope<TestHost>) -> Scope<TestHost> {
    let host = TestHost {
        now: 100.0,
        seed: 7,
        maps: a.host.maps.clone(),
    };
    let mut b = Scope::open(host, options().into(), false);
    drain(&mut b);
    b
}

/// Page `s` hears another tab's end of `key` (its notice), the key seen bound to a payload
/// or fresh.
fn hear_end(s: &mut Scope<TestHost>, key: &str, bound: bool) {
    let mark = crate::core::ended::Mark {
        key: key.into(),
        bound,
        until: s.record().expires_at,
    };
    s.handle(Input::Notice(format!("A{}", mark.line())));
    drain(s);
}

/// Runs page `s`'s commands, `cmds` first, as the browser would (IndexedDB answering from
/// `idb`, the lock granted, wakes due), until a try goes out or nothing is left: every
/// command seen.
fn run(s: &mut Scope<TestHost>, idb: &mut Option<String>, mut cmds: Vec<Command>) -> Vec<Command> {
    let mut seen = Vec::new();
    for _ in 0..16 {
        commit(idb, &cmds);
        seen.extend(cmds.iter().cloned());
        let next = cmds.iter().find_map(|c| match c {
            Command::Wake { wake, .. } => Some(Input::Woken(*wake)),
            Command::Lock { .. } => Some(Input::LockGranted),
            Command::IdbGet { .. } | Command::IdbPeek { .. } => {
                Some(Input::IdbRead(Ok(idb.clone())))
            }
            Command::IdbPut { .. } => Some(Input::IdbWritten(Ok(()))),
            _ => None,
        });
        match next {
            Some(input) if sent(&cmds).is_none() => s.handle(input),
            _ => break,
        }
        cmds = drain(s);
    }
    seen
}

/// The last text each [`Command::IdbPut`] in `cmds` wrote, as IndexedDB would hold it.
fn commit(idb: &mut Option<String>, cmds: &[Command]) {
    for c in cmds {
        if let Command::IdbPut { text, .. } = c {
            *idb = text.clone();
        }
    }
}

/// A scope opened alone, nothing stored and nothing under way; and what IndexedDB holds.
fn settled(host: TestHost) -> (Scope<TestHost>, Option<String>) {
    let mut s = Scope::open(host, options().into(), false);
    drain(&mut s);
    (s, None)
}

/// Submits `{}` and answers the lock, the read (what `idb` holds) and the write: the
/// commands of the first try.
fn first_try(s: &mut Scope<TestHost>, idb: &mut Option<String>, send: Options) -> Vec<Command> {
    let started = s.submit("{}".into(), "fp".into(), Rc::new(send));
    assert!(matches!(started, Submitted::Started(_)), "{started:?}");
    drain(s);
    s.handle(Input::LockGranted);
    drain(s);
    s.handle(Input::IdbRead(Ok(idb.clone())));
    commit(idb, &drain(s));
    s.handle(Input::IdbWritten(Ok(())));
    drain(s)
}

fn sent(cmds: &[Command]) -> Option<&Request> {
    cmds.iter().find_map(|c| match c {
        Command::Send(r) => Some(r),
        _ => None,
    })
}

fn answer(status: u16, retry_after: Option<&str>) -> Input {
    Input::Answer(Answer {
        status,
        body: String::new(),
        retry_after: retry_after.map(Into::into),
        replayed: None,
    })
}

#[test]
fn a_retryable_answer_is_retried_after_retry_after_with_the_same_key_stored_first() {
    let (mut s, mut idb) = settled(TestHost::default());
    let key = s.record().key.clone();
    assert_eq!(
        sent(&first_try(&mut s, &mut idb, options()))
            .unwrap()
            .key_value,
        key
    );
    s.handle(answer(503, Some("2")));
    let cmds = drain(&mut s);
    assert!(
        cmds.contains(&Command::Wake {
            ms: 2000.0,
            wake: Wake::Retry
        }),
        "{cmds:?}"
    );
    s.handle(Input::Woken(Wake::Retry));
    let cmds = drain(&mut s);
    // The second try is stored (attempts 2) before it leaves.
    let Some(Command::IdbPut { text: Some(t), .. }) = cmds.first() else {
        panic!("the retry was not stored first: {cmds:?}")
    };
    assert!(t.contains(r#""attempts":2"#) && t.contains(&key), "{t}");
    s.handle(Input::IdbWritten(Ok(())));
    assert_eq!(sent(&drain(&mut s)).unwrap().key_value, key);
}

#[test]
fn reset_during_a_try_stops_the_sequence_before_its_next_try_with_a_new_key_shown_at_once() {
    let (mut s, mut idb) = settled(TestHost::default());
    let old = s.record().key.clone();
    first_try(&mut s, &mut idb, options());
    s.reset();
    assert_ne!(s.record().key, old, "the new key shows at once");
    let cmds = drain(&mut s);
    assert!(
        cmds.iter().any(
            |c| matches!(c, Command::Post { text, .. } if text.starts_with(&format!("A{old} ")))
        ),
        "the other tabs are asked to stop sending the old key: {cmds:?}"
    );
    s.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut s);
    s.handle(Input::Woken(Wake::Retry));
    let cmds = drain(&mut s);
    assert!(sent(&cmds).is_none(), "a try after reset(): {cmds:?}");
    assert!(
        cmds.iter().any(|c| matches!(
            c,
            Command::Settle {
                outcome: Err(Error::OutcomeUnknown {
                    abandoned: true,
                    ..
                }),
                ..
            }
        )),
        "{cmds:?}"
    );
}

#[test]
fn a_second_submit_joins_the_sequence_of_its_payload_and_another_payload_is_refused() {
    let (mut s, _) = settled(TestHost::default());
    let send = Rc::new(options());
    let first = s.submit("{}".into(), "fp".into(), send.clone());
    assert_eq!(first, Submitted::Started(1));
    assert_eq!(
        s.submit("{}".into(), "fp".into(), send.clone()),
        Submitted::Joined(1)
    );
    assert!(matches!(
        s.submit("[]".into(), "other".into(), send),
        Submitted::Refused(Error::PayloadConflict { .. })
    ));
}

/// A page without Web Locks.
#[derive(Default)]
struct NoLocks(TestHost);

impl Host for NoLocks {
    fn now_ms(&mut self) -> f64 {
        self.0.now_ms()
    }
    fn fill_random(&mut self, out: &mut [u8]) {
        self.0.fill_random(out)
    }
    fn web_locks(&mut self) -> bool {
        false
    }
    fn storage_usable(&mut self, k: StorageKind) -> Result<bool, String> {
        self.0.storage_usable(k)
    }
    fn storage_get(&mut self, k: StorageKind, key: &str) -> Result<Option<String>, String> {
        self.0.storage_get(k, key)
    }
    fn storage_set(&mut self, k: StorageKind, key: &str, v: &str) -> Result<(), String> {
        self.0.storage_set(k, key, v)
    }
    fn storage_remove(&mut self, k: StorageKind, key: &str) {
        self.0.storage_remove(k, key)
    }
    fn storage_keys(&mut self, k: StorageKind, prefix: &str) -> Vec<String> {
        self.0.storage_keys(k, prefix)
    }
}

#[path = "no_locks_tests.rs"]
mod no_locks;

#[path = "tabs_tests.rs"]
mod tabs;

#[path = "open_tests.rs"]
mod open;

#[path = "late_tests.rs"]
mod late;

#[path = "quota_tests.rs"]
mod quota;

#[path = "corrupt_tests.rs"]
mod corrupt;

#[path = "later_page_tests.rs"]
mod later_page;

#[path = "stopped_tests.rs"]
mod stopped;

#[path = "flag_tests.rs"]
mod flag;

#[path = "cached_tests.rs"]
mod cached;

#[path = "lost_flag_tests.rs"]
mod lost_flag;

#[path = "died_tests.rs"]
mod died;

#[path = "legacy_tests.rs"]
mod legacy;

#[path = "uncounted_tests.rs"]
mod uncounted;
