//! Host tests of a scope's machine through its inputs and commands, with a host whose
//! storage is a map and whose clock and randomness are set by the test.

use super::*;
use crate::core::options::{Options, RawOptions, StorageKind};
use crate::core::state::State;
use alloc::collections::BTreeMap;
use alloc::rc::Rc;

/// A page alone: Web Storage as maps, Web Locks present, a clock the test moves.
#[derive(Default)]
struct TestHost {
    now: f64,
    seed: u8,
    maps: BTreeMap<(u8, String), String>,
}

impl Host for TestHost {
    fn now_ms(&mut self) -> f64 {
        self.now
    }
    fn fill_random(&mut self, out: &mut [u8]) {
        for b in out {
            self.seed = self.seed.wrapping_mul(31).wrapping_add(7);
            *b = self.seed;
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

fn drain(s: &mut Scope<TestHost>) -> Vec<Command> {
    core::iter::from_fn(|| s.poll()).collect()
}

#[test]
fn a_submit_stores_its_key_before_the_request_and_settles_with_the_answer() {
    let mut s = Scope::open(TestHost::default(), &options(), false);
    let key = s.record().key.clone();
    drain(&mut s);
    let send = Rc::new(options());
    assert_eq!(
        s.submit("{}".into(), "fp".into(), send),
        Submitted::Started(1)
    );
    s.handle(Input::Woken(Wake::SettleTurn));
    assert!(matches!(drain(&mut s).as_slice(), [Command::Lock { .. }]));
    s.handle(Input::LockGranted);
    assert!(matches!(drain(&mut s).as_slice(), [Command::IdbGet { .. }]));
    s.handle(Input::IdbRead(Ok(None)));
    let cmds = drain(&mut s);
    let Some(Command::IdbPut { text: Some(t), .. }) = cmds.last() else {
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
