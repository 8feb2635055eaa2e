//! Host tests of a page's payment that another tab's end stopped on the wire: Pay pressed
//! again for its basket goes on under its key, also after the page's Pay of another
//! basket.

use super::later_page::{pay_again, sent_under};
use super::*;

/// A page whose first try is on the wire when it hears another tab end that attempt: the
/// page, its IndexedDB, and the key the try went under.
fn stopped_on_the_wire() -> (Scope<TestHost>, Option<String>, String) {
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
