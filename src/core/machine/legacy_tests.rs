//! Host tests of a record the lock holder went on from that its store lacks (core::sync's
//! `Current::Legacy`): another tab's copy, shown here, of a paid attempt the store missed.

use super::*;
use crate::core::record::{Record, StoredResponse};
use crate::core::sync::Notice;

const EARLY: &str = "11111111-1111-4111-8111-111111111111";
const PAID: &str = "22222222-2222-4222-8222-222222222222";

/// A record of the basket (`fp`) under `key`, stored `rev` times, begun at `at`.
fn attempt(key: &str, rev: u64, state: State, at: f64) -> Record {
    let mut r = Record::new(key, "cart-1", at, 86_400_000.0);
    r.rev = rev;
    r.fingerprint = Some("fp".into());
    r.state = state;
    r.attempts = 1;
    if state == State::Succeeded {
        r.response = Some(StoredResponse {
            status: 201,
            body: "{}".into(),
            replayed: false,
        });
    }
    r
}

/// Submits the basket in `s` and runs it with the lock, IndexedDB holding `idb`: the
/// commands.
fn pay(s: &mut Scope<TestHost>, idb: &mut Option<String>) -> Vec<Command> {
    s.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(s);
    run(s, idb, cmds)
}

// 2396984 and 2467027: a page was shown another tab's paid attempt, which IndexedDB missed
// (that tab's write failed there) and which the lock holder went on from to answer a Pay
// from it; then a copy of an attempt begun before it (counted lower: the earlier one, sent
// again by a tab that read it late) came. The paid attempt stays: the page shows it, and
// the next Pay of the basket is answered from it, nothing sent.
#[test]
fn a_paid_attempt_gone_on_from_where_the_store_lacks_it_is_not_replaced_by_an_earlier_one() {
    let (mut s, _) = settled(TestHost::default());
    let early = attempt(EARLY, 1, State::Pending, 0.0);
    let paid = attempt(PAID, 3, State::Succeeded, 50.0);
    s.handle(Input::Notice(Notice::Stored(&paid.encode()).encode()));
    drain(&mut s);
    assert_eq!(s.record().key, PAID);
    // IndexedDB holds the earlier attempt: the other tab's writes of the paid one failed.
    let mut idb = Some(early.encode());
    let cmds = pay(&mut s, &mut idb);
    assert!(sent(&cmds).is_none(), "{cmds:?}");
    // A copy of the earlier attempt, counted on from what its tab read (2), comes late.
    let again = attempt(EARLY, 2, State::Pending, 0.0);
    s.handle(Input::Notice(Notice::Stored(&again.encode()).encode()));
    drain(&mut s);
    assert_eq!(
        s.record().key,
        PAID,
        "an earlier attempt replaced the paid one"
    );
    let cmds = pay(&mut s, &mut idb);
    assert!(sent(&cmds).is_none(), "the basket went out again: {cmds:?}");
}

// 2396984 and 2467027 again, at the lock: IndexedDB held nothing live, and localStorage, read
// late, a copy of the earlier attempt that IndexedDB never held (`rev` 0, written by a tab
// without IndexedDB): weighed against the paid attempt this page was shown, as IndexedDB's
// record would be, it began before, and the Pay is answered from the paid one.
#[test]
fn a_paid_attempt_shown_is_gone_on_from_over_the_mirrors_copy_of_an_earlier_one() {
    let (mut s, _) = settled(TestHost::default());
    let paid = attempt(PAID, 2, State::Succeeded, 50.0);
    s.handle(Input::Notice(Notice::Stored(&paid.encode()).encode()));
    drain(&mut s);
    let early = attempt(EARLY, 0, State::Pending, 0.0);
    let at = (StorageKind::Local as u8, "idemkey:v1:cart-1".to_string());
    s.host.maps.insert(at, early.encode());
    let cmds = pay(&mut s, &mut None);
    assert!(sent(&cmds).is_none(), "the basket went out again: {cmds:?}");
    assert_eq!(s.record().key, PAID);
}
