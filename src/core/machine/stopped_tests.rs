//! Host tests of a page's payment that another tab's end stopped on the wire: Pay pressed
//! again for its basket goes on under its key, also after the page's Pay of another
//! basket; and of one left `outcome-unknown` that another tab ended and replaced with the
//! next order's attempt, shown in the page before the end's mark reached it: Pay pressed
//! again sends nothing.

use super::later_page::{pay_again, sent_under};
use super::*;

/// A page whose first try is on the wire when it hears another tab end that attempt: the
/// page, its IndexedDB, and the key the try went under.
pub(super) fn stopped_on_the_wire() -> (Scope<TestHost>, Option<String>, String) {
    let (mut b, mut idb) = settled(TestHost::default());
    let first = first_try(&mut b, &mut idb, options());
    let key = sent(&first).expect("a first try").key_value.clone();
    hear_end(&mut b, &key, true);
    (b, idb, key)
}

/// Pay pressed in page `b` for another basket, the page's second submit.
fn pay_other_basket(b: &mut Scope<TestHost>) {
    let other = b.submit("[1]".into(), "fp2".into(), Rc::new(options()));
    assert_eq!(other, Submitted::Started(2));
    drain(b);
}

// P-outcome-unknown-keeps-key: another tab's finish() stopped this tab's payment on the
// wire; Pay pressed again here before that payment reported goes on under its key (the
// server answers it once), never under a new one.
#[test]
fn pay_pressed_again_after_another_tab_ended_the_payment_on_the_wire_keeps_its_key() {
    let (mut b, mut idb, key) = stopped_on_the_wire();
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut b);
    b.handle(Input::NoAnswer(NoAnswer::Network));
    let cmds = drain(&mut b);
    sent_under(&run(&mut b, &mut idb, cmds), &key);
}

// P-outcome-unknown-keeps-key: another tab's end stopped this page's payment on the wire,
// and Pay for another basket went in before that payment reported; both end
// outcome-unknown, the first one last. Pay pressed again for the first basket goes on
// under its key (its submit was called before the end), never under a new one.
#[test]
fn pay_again_for_a_stopped_payment_after_another_baskets_pay_keeps_its_key() {
    let (mut b, mut idb, key) = stopped_on_the_wire();
    pay_other_basket(&mut b);
    b.handle(Input::Woken(Wake::Deadline(2)));
    let mut cmds = drain(&mut b);
    b.handle(Input::NoAnswer(NoAnswer::Network));
    let next = drain(&mut b);
    cmds.extend(run(&mut b, &mut idb, next));
    let settled: Vec<u32> = cmds
        .iter()
        .filter_map(|c| match c {
            Command::Settle {
                flight,
                outcome: Err(Error::OutcomeUnknown { .. }),
            } => Some(*flight),
            _ => None,
        })
        .collect();
    assert_eq!(settled, [2, 1], "{cmds:?}");
    sent_under(&pay_again(&mut b, &mut idb), &key);
}

// P-abandoned: another tab's end stopped this page's payment on the wire, and Pay for
// another basket ended outcome-unknown at its deadline; Pay pressed again for the first
// basket, whose payment has still not reported, goes on under its key, never a new one.
#[test]
fn pay_again_for_a_stopped_payment_still_on_the_wire_after_another_baskets_pay_keeps_its_key() {
    let (mut b, mut idb, key) = stopped_on_the_wire();
    pay_other_basket(&mut b);
    b.handle(Input::Woken(Wake::Deadline(2)));
    drain(&mut b);
    let again = b.submit("{}".into(), "fp".into(), Rc::new(options()));
    assert_eq!(again, Submitted::Started(3));
    drain(&mut b);
    b.handle(Input::NoAnswer(NoAnswer::Network));
    let next = drain(&mut b);
    let cmds = run(&mut b, &mut idb, next);
    sent_under(&cmds, &key);
}

// P-abandoned: as above, but the stopped payment reports (outcome-unknown) before the
// other basket's Pay ends at its deadline; Pay pressed again for the first basket goes on
// under its key.
#[test]
fn pay_again_for_a_stopped_payment_that_reported_before_another_baskets_pay_keeps_its_key() {
    let (mut b, mut idb, key) = stopped_on_the_wire();
    pay_other_basket(&mut b);
    b.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut b);
    b.handle(Input::Woken(Wake::Retry));
    drain(&mut b);
    // The other basket's Pay waits for the lock, which another tab holds, until its deadline.
    b.handle(Input::Woken(Wake::Deadline(2)));
    drain(&mut b);
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut b);
    b.handle(Input::LockGranted);
    let next = drain(&mut b);
    let cmds = run(&mut b, &mut idb, next);
    sent_under(&cmds, &key);
}

// P-unknown-resumes: tab B pays; tab A (showing B's payment) calls reset() while B's try is
// on the wire: A writes the scope's flag, then the mark, and posts its notice. B hears it
// (its Web Storage had A's writes already: B's own writes of them change nothing there),
// and its payment ends outcome-unknown (abandoned). A third page of the origin opened the
// namespace when A's flag had reached it and the mark not yet: its sweep deleted the flag,
// in every tab. Pay pressed again in B goes on under its attempt's key, as the docs
// promise. It used to be given up before its try, and so was every later Pay: the lock
// holder, listing marks only where the flag is, planned the key as live, and the check
// before the try, reading the key's own mark, gave it up.
#[test]
fn pay_again_goes_on_under_its_key_when_a_sweep_ran_between_an_ends_flag_and_its_mark() {
    let (mut b, mut idb) = settled(TestHost::default());
    let first = first_try(&mut b, &mut idb, options());
    let key = sent(&first).expect("a first try").key_value.clone();
    let mut a = beside(&b);
    assert_eq!(a.record().key, key, "A does not show B's payment");
    a.reset();
    let notice = drain(&mut a)
        .into_iter()
        .find_map(|c| match c {
            Command::Post { text, .. } => Some(text),
            _ => None,
        })
        .expect("A posted no notice");
    // The third page: A's flag has reached it, the mark not yet; it opens the namespace.
    let mut seen = b.host.maps.clone();
    for ((kind, k), v) in &a.host.maps {
        if k.contains(":ends:") {
            seen.insert((*kind, k.clone()), v.clone());
        }
    }
    let host = TestHost {
        now: 200.0,
        seed: 11,
        maps: seen,
    };
    let third = Scope::open(host, options().into(), true);
    hand_over(&a, &mut b, ":end");
    b.handle(Input::Notice(notice));
    drain(&mut b);
    // The sweep's removal reaches the tabs after B's writes, which changed nothing.
    for (k, _) in a.host.maps.clone() {
        if k.1.contains(":ends:") && !third.host.maps.contains_key(&k) {
            b.host.maps.remove(&k);
        }
    }
    b.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut b);
    b.handle(Input::Woken(Wake::Retry));
    let stopped = drain(&mut b);
    assert!(sent(&stopped).is_none(), "a try after the end: {stopped:?}");
    sent_under(&pay_again(&mut b, &mut idb), &key);
}

// P-unknown-resumes: another tab's end stopped this page's payment, which ended
// outcome-unknown; Pay pressed again here goes on with that attempt under its key, and
// changes nothing stored, its try nor its answer: the attempt ended, and the record in
// Web Storage may by then be the next order's, which a tab without IndexedDB keeps there
// alone (this page's view of it late), so a later Pay of that order still finds its key.
#[test]
fn pay_again_for_an_attempt_another_tab_ended_changes_nothing_stored() {
    let (mut b, mut idb, key) = stopped_on_the_wire();
    b.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut b);
    b.handle(Input::Woken(Wake::Retry));
    drain(&mut b);
    let (maps, stored) = (b.host.maps.clone(), idb.clone());
    let cmds = pay_again(&mut b, &mut idb);
    sent_under(&cmds, &key);
    b.handle(answer(201, None));
    let mut cmds = drain(&mut b);
    cmds.extend(run(&mut b, &mut idb, Vec::new()));
    let paid = cmds.iter().any(
        |c| matches!(c, Command::Settle { outcome: Ok(r), .. } if r.key == key && !r.from_cache),
    );
    assert!(paid, "not resolved with the answer: {cmds:?}");
    let written: Vec<_> = b
        .host
        .maps
        .iter()
        .filter(|e| maps.get(e.0) != Some(e.1))
        .collect();
    assert!(written.is_empty(), "Web Storage written: {written:?}");
    assert_eq!(idb, stored, "IndexedDB written");
}

/// Page A pays the basket once, without retries, and the try is lost: A, its store, the key
/// sent, and the commands A gave as the try ended (its `outcome-unknown`).
fn paid_once_lost() -> (Scope<TestHost>, Option<String>, String, Vec<Command>) {
    let mut once = options();
    once.max_retries = 0;
    let (mut a, mut idb) = settled(TestHost::default());
    let first = first_try(&mut a, &mut idb, once);
    let k1 = sent(&first).expect("a first try").key_value.clone();
    a.handle(Input::NoAnswer(NoAnswer::Network));
    let unknown = drain(&mut a);
    (a, idb, k1, unknown)
}

/// Page A's payment of the basket ended `outcome-unknown` (the try lost, no retries); tab B,
/// showing it, finished it and paid the basket again (the next order) under a new key,
/// answered `status`. A heard B's copies (its notices) but not the end: the mark is not in
/// A's storage, nor its notice. Then Pay pressed again in A, twice: every command A gave.
fn shown_the_attempt_that_replaced_its_own(status: Option<u16>) -> String {
    let (mut a, mut idb, k1, unknown) = paid_once_lost();
    let settled_unknown = unknown.iter().any(|c| {
        matches!(
            c,
            Command::Settle {
                outcome: Err(Error::OutcomeUnknown { .. }),
                ..
            }
        )
    });
    assert!(settled_unknown, "{unknown:?}");
    let mut b = beside(&a);
    assert_eq!(b.record().key, k1);
    b.finish();
    drain(&mut b);
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut b);
    let mut heard = run(&mut b, &mut idb, cmds);
    let k2 = sent(&heard).expect("B sent nothing").key_value.clone();
    if let Some(status) = status {
        b.handle(answer(status, None));
        heard.extend(drain(&mut b));
        b.handle(Input::Woken(Wake::AnswerTurn));
        let cmds = drain(&mut b);
        commit(&mut idb, &cmds);
        heard.extend(cmds);
    }
    // A hears B's stored copies, not the end (its notice lost, its mark not handed over).
    hear_stored_copies(&mut a, heard);
    assert_eq!(a.record().key, k2, "A does not show B's attempt");
    pay_again_twice(&mut a, &mut idb)
}

/// `a` hears the stored copies another tab posted in `heard`, in order, one at a time.
fn hear_stored_copies(a: &mut Scope<TestHost>, heard: Vec<Command>) {
    for c in heard {
        if let Command::Post { text, .. } = c {
            if text.starts_with('S') {
                a.handle(Input::Notice(text));
                drain(a);
            }
        }
    }
}

/// Pay pressed again in `a`, for the basket its own payment left unknown, twice: what it
/// did, as text.
fn pay_again_twice(a: &mut Scope<TestHost>, idb: &mut Option<String>) -> String {
    let mut again = Vec::new();
    for _ in 0..2 {
        a.submit("{}".into(), "fp".into(), Rc::new(options()));
        let cmds = drain(a);
        again.extend(run(a, idb, cmds));
    }
    format!("{again:?}")
}

// P-submit-before-end: the page's own attempt, whose outcome is unknown, was replaced by the
// next order's; the page was shown that attempt (refused by the server, or on the wire)
// before it heard of the end. Pay pressed again belongs to the page's own attempt, whose
// record is gone: it rejects outcome-unknown (abandoned) and sends nothing, neither the
// other order's key nor a new one, which could charge the basket a second time; so does the
// press after it.
#[test]
fn pay_again_after_an_unknown_outcome_sends_nothing_once_shown_the_attempt_that_replaced_it() {
    for status in [Some(402), None] {
        let again = shown_the_attempt_that_replaced_its_own(status);
        assert!(!again.contains("Send("), "{status:?}: sent: {again}");
        assert!(
            again.contains("abandoned: true"),
            "{status:?}: not abandoned: {again}"
        );
    }
}

// P-submit-before-end: the page's own attempt, whose outcome its last submit left unknown,
// was then paid in tab B (the page was shown it succeeded), which finished it and paid the
// next order under a new key; the page was shown that attempt before it heard of the end.
// A succeeded record is replaced only once its attempt ended, as a pending one is: Pay
// pressed again belongs to the page's own attempt, whose record is gone, and sends nothing
// (seed 1921788 sent the next order's key for this one).
#[test]
fn pay_again_sends_nothing_once_shown_the_next_attempt_over_its_own_paid_one() {
    let (mut a, mut idb, k1, _) = paid_once_lost();
    let mut b = beside(&a);
    assert_eq!(b.record().key, k1);
    // B pays the basket under k1 (the server answers it once), then finishes it and pays
    // the next order under a new key.
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut b);
    let mut heard = run(&mut b, &mut idb, cmds);
    assert_eq!(sent(&heard).expect("B sent nothing").key_value, k1);
    b.handle(answer(201, None));
    heard.extend(drain(&mut b));
    b.handle(Input::Woken(Wake::AnswerTurn));
    let cmds = drain(&mut b);
    commit(&mut idb, &cmds);
    heard.extend(cmds);
    b.handle(Input::IdbWritten(Ok(())));
    heard.extend(drain(&mut b));
    b.finish();
    drain(&mut b);
    b.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut b);
    let next = run(&mut b, &mut idb, cmds);
    let k2 = sent(&next).expect("B sent nothing").key_value.clone();
    heard.extend(next);
    // A hears B's stored copies in order, not the end (its notice lost, its mark late).
    hear_stored_copies(&mut a, heard);
    assert_eq!(a.record().key, k2, "A does not show B's next attempt");
    let again = pay_again_twice(&mut a, &mut idb);
    assert!(!again.contains("Send("), "sent: {again}");
    assert!(again.contains("abandoned: true"), "not abandoned: {again}");
}

// P-submit-before-end: tab B showed a key of its own when its Pay was pressed, but the lock
// holder went on with the attempt tab A had stored meanwhile (its notice not there yet) and
// sent K1; the try's outcome is unknown, and A then gave K1 up (`reset()`) before any answer.
// Pay pressed again in B resumes the attempt its last Pay sent: it goes on under K1 (the
// server answers it once), where a page that never sent K1 may not.
#[test]
fn pay_again_goes_on_under_the_key_its_last_pay_sent_after_another_tab_ended_it() {
    let (mut a, mut idb) = settled(TestHost::default());
    let mut b = beside(&a);
    let own = b.record().key.clone();
    first_try(&mut a, &mut idb, options());
    let k1 = a.record().key.clone();
    assert_ne!(k1, own);
    sent_under(&pay_again(&mut b, &mut idb), &k1);
    b.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut b);
    b.host.now += 120_000.0;
    b.handle(Input::Woken(Wake::Retry));
    drain(&mut b);
    a.reset();
    drain(&mut a);
    hear_end(&mut b, &k1, true);
    sent_under(&pay_again(&mut b, &mut idb), &k1);
}
