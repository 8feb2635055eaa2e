//! Host tests of two tabs of one scope, each a machine over its own Web Storage copy, with
//! IndexedDB (the record every tab shares) played by hand: `finish()` in one tab while
//! another tab pays.

use super::*;
use crate::core::record::Record;
use crate::core::sync::Notice;

/// Tab `b` hears the notices another tab posted among `cmds`.
fn hear(b: &mut Scope<TestHost>, cmds: Vec<Command>) {
    for c in cmds {
        if let Command::Post { text, .. } = c {
            b.handle(Input::Notice(text));
        }
    }
    drain(b);
}

/// `cmds`, or where they ask IndexedDB for a write before the try, the commands once it
/// committed.
fn through_write(b: &mut Scope<TestHost>, cmds: Vec<Command>) -> Vec<Command> {
    if sent(&cmds).is_some() {
        return cmds;
    }
    b.handle(Input::IdbWritten(Ok(())));
    drain(b)
}

/// Tab `b`'s submit of the basket, called now, answered with the lock and `idb`: its
/// commands.
fn pay_with_lock(b: &mut Scope<TestHost>, idb: &mut Option<String>) -> Vec<Command> {
    b.handle(Input::LockGranted);
    drain(b);
    b.handle(Input::IdbRead(Ok(idb.clone())));
    let cmds = drain(b);
    commit(idb, &cmds);
    cmds
}

/// The error submit 1 is settled with, as the first of `cmds` (at its deadline).
fn first_error(cmds: &[Command]) -> &Error {
    let Some(Command::Settle {
        flight: 1,
        outcome: Err(e),
    }) = cmds.first()
    else {
        panic!("not settled at the deadline: {cmds:?}")
    };
    e
}

/// The settled outcome in `cmds`.
fn outcome(cmds: &[Command]) -> Option<&Result<Reply, Error>> {
    cmds.iter().find_map(|c| match c {
        Command::Settle { outcome, .. } => Some(outcome),
        _ => None,
    })
}

// P-submit-before-end: Pay in tab B while tab A's payment is on the wire, A's receipt route
// calls finish(): B's submit was called before the finish(), so it is that attempt's, and
// resolves with A's answer without sending.
#[test]
fn a_pay_pressed_before_finish_in_another_tab_resolves_with_that_attempts_answer() {
    for reset in [false, true] {
        let (mut a, mut b, mut idb) = two_tabs();
        let key = a.record().key.clone();
        let started = b.submit("{}".into(), "fp".into(), Rc::new(options()));
        assert!(matches!(started, Submitted::Started(_)));
        drain(&mut b);
        if reset {
            a.reset();
        } else {
            a.finish();
        }
        drain(&mut a);
        let cmds = pay_with_lock(&mut b, &mut idb);
        assert!(sent(&cmds).is_none(), "a second try went out: {cmds:?}");
        let Some(Ok(r)) = outcome(&cmds) else {
            panic!("B did not resolve with A's answer: {cmds:?}")
        };
        assert_eq!(
            (r.key.as_str(), r.status, r.from_cache),
            (key.as_str(), 201, true)
        );
    }
}

// P-submit-before-end: the same Pay whose deadline ran out while A held the lock
// (`another-tab`), pressed again once A's finish() is known: A's answer, nothing sent.
#[test]
fn a_pay_that_waited_out_another_tab_and_is_pressed_again_after_finish_gets_its_answer() {
    let (mut a, mut b, mut idb) = two_tabs();
    let key = a.record().key.clone();
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut b);
    b.handle(Input::Woken(Wake::Deadline(1)));
    let cmds = drain(&mut b);
    assert!(matches!(
        outcome(&cmds),
        Some(Err(Error::OutcomeUnknown { .. }))
    ));
    a.finish();
    let notices: Vec<String> = drain(&mut a)
        .into_iter()
        .filter_map(|c| match c {
            Command::Post { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    for n in notices {
        b.handle(Input::Notice(n));
    }
    drain(&mut b);
    // The first submit's turn with the lock comes, and goes: it settled.
    pay_with_lock(&mut b, &mut idb);
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut b);
    let cmds = pay_with_lock(&mut b, &mut idb);
    assert!(sent(&cmds).is_none(), "a second try went out: {cmds:?}");
    let Some(Ok(r)) = outcome(&cmds) else {
        panic!("the press again did not get A's answer: {cmds:?}")
    };
    assert_eq!((r.key.as_str(), r.status), (key.as_str(), 201));
}

// P-finish-durable: a Pay pressed once the tab heard of the finish() is the next order's.
#[test]
fn a_pay_pressed_after_hearing_of_finish_in_another_tab_pays_anew_under_a_new_key() {
    let (mut a, mut b, mut idb) = two_tabs();
    let key = a.record().key.clone();
    a.finish();
    hear(&mut b, drain(&mut a));
    assert_ne!(b.record().key, key, "B still shows the attempt A finished");
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut b);
    let cmds = pay_with_lock(&mut b, &mut idb);
    let cmds = through_write(&mut b, cmds);
    let r = sent(&cmds).expect("the next order was not sent");
    assert_ne!(r.key_value, key);
    assert_eq!(r.key_value, b.record().key);
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
    let e = first_error(&cmds);
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

/// The page's clock is set back 2 s while a try is on the wire; the deadline's timer runs
/// (timers do not follow the clock); the try's answer asks for a retry in a second: no
/// wait follows the deadline, whatever the clock says of the time spent.
#[test]
fn a_clock_set_back_does_not_stretch_the_deadline() {
    let (mut b, mut idb) = settled(TestHost::default());
    let mut o = options();
    o.deadline_ms = 3_000;
    assert!(sent(&first_try(&mut b, &mut idb, o)).is_some());
    b.host.now -= 2_000.0;
    b.handle(Input::Woken(Wake::Deadline(1)));
    assert!(all(&mut b).is_empty(), "the try on the wire was cut short");
    b.handle(answer(503, Some("1")));
    let cmds = all(&mut b);
    let ended = matches!(outcome(&cmds), Some(Err(Error::OutcomeUnknown { .. })));
    assert!(ended, "a retry after the deadline: {cmds:?}");
}

/// A retry's write waits behind another tab's IndexedDB transaction (a frozen tab's read
/// of a stored answer) past the deadline: the submit ends then, `outcome-unknown`, reason
/// `deadline`, counting the one try sent; the write's commit, once the other tab thaws,
/// sends nothing and lets the lock go.
#[test]
fn a_retrys_write_held_up_by_another_tab_ends_at_the_deadline() {
    let (mut b, mut idb) = settled(TestHost::default());
    let mut o = options();
    o.deadline_ms = 3_000;
    assert!(sent(&first_try(&mut b, &mut idb, o)).is_some());
    b.handle(answer(503, None));
    all(&mut b);
    b.host.now += 300.0;
    b.handle(Input::Woken(Wake::Retry));
    let cmds = all(&mut b);
    assert!(
        cmds.iter().any(|c| matches!(c, Command::IdbPut { .. })),
        "{cmds:?}"
    );
    b.host.now = 3_000.0;
    b.handle(Input::Woken(Wake::Deadline(1)));
    let cmds = all(&mut b);
    let e = first_error(&cmds);
    let want = Error::OutcomeUnknown {
        attempts: 1,
        reason: "deadline".into(),
        abandoned: false,
    };
    assert_eq!(*e, want);
    b.handle(Input::IdbWritten(Ok(())));
    assert_eq!(all(&mut b), vec![Command::Unlock]);
}

/// B presses Pay and takes the lock, and IndexedDB answers its read with `got`: what B
/// does next.
fn pay_with_read(b: &mut Scope<TestHost>, got: Result<Option<String>, String>) -> Vec<Command> {
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(b);
    b.handle(Input::LockGranted);
    drain(b);
    b.handle(Input::IdbRead(got));
    drain(b)
}

/// Tab A's payment is on the wire (its pending record stored, and posted to tab B, which
/// shows it); B's Web Storage has not had A's copy yet (localStorage reaches other tabs
/// late). B's Pay, at its lock, reads nothing live: IndexedDB failed, or holds nothing
/// (cleared): B goes on with the key it shows, A's, and never mints another.
#[test]
fn a_pay_in_a_tab_showing_another_tabs_payment_on_the_wire_sends_that_key_whatever_the_read() {
    for got in [Err("UnknownError".to_string()), Ok(None)] {
        let (mut a, mut idb) = settled(TestHost::default());
        let mut b = beside(&a);
        let cmds = first_try(&mut a, &mut idb, options());
        let key = sent(&cmds).expect("A sent nothing").key_value.clone();
        hear(&mut b, cmds);
        assert_eq!(b.record().key, key, "B does not show A's payment");
        let cmds = pay_with_read(&mut b, got.clone());
        let cmds = through_write(&mut b, cmds);
        let r = sent(&cmds).unwrap_or_else(|| panic!("B sent nothing ({got:?}): {cmds:?}"));
        assert_eq!(r.key_value, key, "B sent a key it never showed ({got:?})");
    }
}

/// Tab A holds the scope's lock and its try is on the wire; a notice of another tab's
/// record, stored before A took the lock (it arrives late), reaches A: A keeps showing the
/// key it sends, and its retry sends that key.
#[test]
fn a_page_holding_the_lock_keeps_showing_the_key_it_sends() {
    let (mut a, mut idb) = settled(TestHost::default());
    let key = sent(&first_try(&mut a, &mut idb, options()))
        .expect("A sent nothing")
        .key_value
        .clone();
    let mut other = Record::new("22222222-2222-4222-8222-222222222222", "cart-1", 99.0, 1e9);
    other.rev = 9;
    other.state = State::Succeeded;
    other.fingerprint = Some("fp".into());
    a.handle(Input::Notice(Notice::Stored(&other.encode()).encode()));
    drain(&mut a);
    assert_eq!(a.record().key, key, "A shows a copy stored before its lock");
    a.handle(Input::NoAnswer(NoAnswer::Network));
    let cmds = drain(&mut a);
    let wake = cmds.iter().find_map(|c| match c {
        Command::Wake { wake, .. } => Some(*wake),
        _ => None,
    });
    a.handle(Input::Woken(wake.expect("no retry planned")));
    let cmds = drain(&mut a);
    let cmds = through_write(&mut a, cmds);
    let r = sent(&cmds).expect("no retry sent");
    assert_eq!(
        (r.key_value.as_str(), a.record().key.as_str()),
        (key.as_str(), key.as_str())
    );
}

// P-submit-before-end: this tab's payment ended outcome-unknown; another tab gave its key up
// (reset()) and paid the basket again under a new key, stored in IndexedDB; the mark has
// not reached this tab's localStorage yet (nor the notice). Pay pressed again here belongs
// to the attempt this page was paying, whose record the new one replaced: it rejects
// outcome-unknown (abandoned) and sends nothing, never the other tab's key for this order.
#[test]
fn pay_again_after_an_unknown_outcome_does_not_go_on_with_the_attempt_that_replaced_it() {
    let mut once = options();
    once.max_retries = 0;
    let (mut a, mut idb) = settled(TestHost::default());
    let first = first_try(&mut a, &mut idb, once.clone());
    let k1 = sent(&first).expect("a first try").key_value.clone();
    a.handle(Input::NoAnswer(NoAnswer::Network));
    let unknown = drain(&mut a);
    let settled_unknown = matches!(outcome(&unknown), Some(Err(Error::OutcomeUnknown { .. })));
    assert!(settled_unknown, "{unknown:?}");
    // Tab B shows A's attempt, gives it up, and pays the basket under a new key.
    let mut b = beside(&a);
    assert_eq!(b.record().key, k1);
    b.reset();
    drain(&mut b);
    let k2 = b.record().key.clone();
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut b);
    let paid = run(&mut b, &mut idb, cmds);
    assert_eq!(sent(&paid).map(|r| r.key_value.clone()), Some(k2.clone()));
    // Pay pressed again in A, which has heard nothing of it.
    a.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut a);
    let again = run(&mut a, &mut idb, cmds);
    assert!(sent(&again).is_none(), "sent for this order: {again:?}");
    let abandoned = again.iter().any(|c| {
        matches!(
            c,
            Command::Settle {
                outcome: Err(Error::OutcomeUnknown {
                    abandoned: true,
                    ..
                }),
                ..
            }
        )
    });
    assert!(abandoned, "{again:?}");
}

/// The server refused tab A's payment (402), as B's localStorage has it; A pays again under
/// a new key, its IndexedDB fails, and it posts the new attempt to B. B's Pay, whose
/// IndexedDB read fails too, sends A's new key (posted to it), not a third one.
#[test]
fn a_tab_whose_read_fails_goes_on_from_the_attempt_posted_after_its_late_copy() {
    let (mut a, mut idb) = settled(TestHost::default());
    let mut b = beside(&a);
    let cmds = first_try(&mut a, &mut idb, options());
    hear(&mut b, cmds);
    a.handle(answer(402, None));
    drain(&mut a);
    a.handle(Input::Woken(Wake::AnswerTurn));
    let cmds = drain(&mut a);
    commit(&mut idb, &cmds);
    a.handle(Input::IdbWritten(Ok(())));
    let done = drain(&mut a);
    hear(&mut b, cmds);
    hear(&mut b, done);
    b.host.maps = a.host.maps.clone();
    assert_eq!(b.record().state, State::Failed);
    // A pays again: a new attempt, whose retry's write IndexedDB refuses.
    let cmds = first_try(&mut a, &mut idb, options());
    let key = sent(&cmds).expect("A sent nothing").key_value.clone();
    hear(&mut b, cmds);
    a.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut a);
    a.handle(Input::Woken(Wake::Retry));
    drain(&mut a);
    a.handle(Input::IdbWritten(Err("AbortError".into())));
    let cmds = drain(&mut a);
    assert_eq!(
        sent(&cmds).map(|r| r.key_value.as_str()),
        Some(key.as_str())
    );
    hear(&mut b, cmds);
    assert_eq!(b.record().key, key, "B does not show A's payment");
    let cmds = pay_with_read(&mut b, Err("UnknownError".into()));
    let r = sent(&cmds).unwrap_or_else(|| panic!("B sent nothing: {cmds:?}"));
    assert_eq!(r.key_value, key, "B paid the basket under a third key");
}
