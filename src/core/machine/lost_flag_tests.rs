//! An end's mark whose scope's flag (`<namespace>:ends:<scope>`) is gone: removed by hand,
//! or deleted by another page's sweep as the end was being written. A page lists a
//! scope's marks only where the flag is, but reads a key's own mark directly wherever it
//! looks at that key; finding a mark so, it writes the flag again, so that its listings,
//! and every page's after it, count the mark from then on. A page that made, was told of or
//! read an end of the scope, or whose first `open()` swept the namespace and listed a mark
//! of the scope, lists its marks whatever the flag (a script may remove it after the page
//! wrote it again). [P-finish-durable] [P-abandoned]

use super::later_page::{later_page_pays_anew, pay_again, sent_under};
use super::stopped::stopped_on_the_wire;
use super::*;

/// The flag of every backend taken out of page `s`'s storage.
fn flag_removed(s: &mut Scope<TestHost>) {
    s.host.maps.retain(|(_, k), _| !k.contains(":ends:"));
}

/// A page that paid the basket and then called `finish()`; what IndexedDB holds; and the
/// finished attempt's key.
fn finished_page() -> (Scope<TestHost>, Option<String>, String) {
    let (mut a, idb) = paid_page();
    let old = a.record().key.clone();
    a.finish();
    drain(&mut a);
    (a, idb, old)
}

/// Pay pressed again in page `s` goes out under the key it shows.
fn pays_under_the_key_shown(s: &mut Scope<TestHost>, idb: &mut Option<String>) {
    let next = s.record().key.clone();
    sent_under(&pay_again(s, idb), &next);
}

#[test]
fn a_later_page_pays_the_next_order_anew_when_the_finished_attempts_flag_was_removed() {
    let (mut a, mut idb) = paid_page();
    let old = a.record().key.clone();
    a.host.now = 1_000.0;
    a.finish();
    drain(&mut a);
    flag_removed(&mut a);
    later_page_pays_anew(&a, &old, &mut idb);
}

#[test]
fn pay_again_of_a_payment_another_tabs_end_stopped_goes_on_under_its_key_without_the_flag() {
    // Another tab's end while the try is on the wire: its flag and mark are in this tab's
    // storage, and then the flag is removed.
    let (mut b, mut idb, key) = stopped_on_the_wire();
    flag_removed(&mut b);
    b.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut b);
    b.handle(Input::Woken(Wake::Retry));
    assert!(sent(&drain(&mut b)).is_none(), "a try after the end");
    // Pressed before the end, the payment belongs to the attempt that ended: Pay again
    // goes on under its key (the server answers it once).
    sent_under(&pay_again(&mut b, &mut idb), &key);
    // A page opened after the end shows a new attempt and pays under its key.
    later_page_pays_anew(&b, &key, &mut idb);
}

#[test]
fn the_page_that_finished_pays_the_next_order_anew_when_a_script_removed_the_flag() {
    // Seed 565 of the simulator's world with a script that removes flags: the page's own
    // end, its flag gone before its next Pay, is still heard there.
    let (mut a, mut idb, old) = finished_page();
    flag_removed(&mut a);
    assert_ne!(a.record().key, old);
    pays_under_the_key_shown(&mut a, &mut idb);
}

#[test]
fn a_tab_told_of_an_end_elsewhere_pays_the_next_order_anew_when_the_flag_was_removed() {
    // Tab B hears A's finish() (its notice), then a script removes the flag: B's next Pay
    // was called after the end it heard of.
    let (a, mut b, mut idb) = two_tabs();
    let old = a.record().key.clone();
    hear_end(&mut b, &old, true);
    flag_removed(&mut b);
    assert_ne!(b.record().key, old);
    pays_under_the_key_shown(&mut b, &mut idb);
}

#[test]
fn a_page_that_read_an_end_in_its_storage_pays_anew_after_the_flag_was_removed() {
    // Tab B opened after A's finish(), with A's mark in its storage (its listing and the
    // copy's own entry read it), then a script removed the flag before B's Pay.
    let (a, mut idb, old) = finished_page();
    let mut b = beside(&a);
    assert_ne!(b.record().key, old, "B shows the finished attempt");
    flag_removed(&mut b);
    pays_under_the_key_shown(&mut b, &mut idb);
}

#[test]
fn a_page_opened_where_a_mark_of_the_scope_is_but_no_flag_pays_the_next_order_anew() {
    // A's finish() left its mark, then the flag was removed, and Web Storage holds no copy
    // of the finished attempt (IndexedDB does): the page opened then never made, heard of
    // or read an end, but its first open() sweeps the namespace and finds the mark there.
    let (mut a, mut idb, old) = finished_page();
    flag_removed(&mut a);
    let copy = a.rec_key().to_string();
    a.host.maps.retain(|(_, k), _| *k != copy);
    let host = TestHost {
        now: 100.0,
        seed: 7,
        maps: a.host.maps.clone(),
    };
    let mut b = Scope::open(host, options().into(), true);
    drain(&mut b);
    assert_ne!(b.record().key, old);
    pays_under_the_key_shown(&mut b, &mut idb);
}

#[test]
fn a_tab_showing_an_attempt_ended_elsewhere_hears_its_mark_at_submit_without_the_flag() {
    // Seed 1528757: tab B shows attempt K1 (pending, its outcome unknown) when tab C
    // resets it; C's clock is then set back, its IndexedDB fails, and it pays the next
    // order under K2, whose copy, written earlier by its time, B does not take for newer.
    // K1's mark reaches B's storage, and a script removes the flag. B's Pay, called with
    // the mark of the key it shows in its storage, is called after the end: it never sends
    // K1 again for the next order, and goes on from C's copy under K2.
    let (mut a, mut idb) = settled(TestHost {
        now: 1_000.0,
        ..TestHost::default()
    });
    let old = a.record().key.clone();
    first_try(&mut a, &mut idb, options());
    let mut b = beside(&a);
    let mut c = beside(&a);
    assert_eq!((&b.record().key, &c.record().key), (&old, &old));
    c.reset();
    c.host.now = 500.0;
    c.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(&mut c);
    c.handle(Input::LockGranted);
    drain(&mut c);
    c.handle(Input::IdbRead(Err("UnknownError: the read failed".into())));
    let next = sent(&drain(&mut c))
        .expect("C pays the next order")
        .key_value
        .clone();
    assert_ne!(next, old);
    hand_over(&c, &mut b, ":ended:");
    hand_over(&c, &mut b, ":v1:");
    flag_removed(&mut b);
    b.host.now = 2_000.0;
    sent_under(&pay_again(&mut b, &mut idb), &next);
}

// P-finish-durable: seed 2208551 (before the merge of h33, which changed its schedule). A
// page opened after another page gave up an attempt whose record IndexedDB holds without an
// answer (pending: its payment ended outcome-unknown, or the answer's write failed there),
// the flag removed by a script and the page's Web Storage copy of an older attempt (the
// copies of the later ones refused there, its quota full): its Pay counts the mark, found
// by its own entry at the lock, as not heard yet, and belongs to the attempt ended. It was
// not pressed before that end, and that attempt was never this page's: it rejects
// outcome-unknown (abandoned), nothing sent under the key given up; so does Pay pressed
// again.
#[test]
fn a_later_page_without_the_flag_sends_nothing_under_an_ended_key_it_never_paid_under() {
    let mut once = options();
    once.max_retries = 0;
    let host = TestHost {
        now: 5_000.0,
        ..TestHost::default()
    };
    let (mut a, mut idb) = settled(host);
    let first = first_try(&mut a, &mut idb, once);
    let old = sent(&first).expect("a first try").key_value.clone();
    a.handle(Input::NoAnswer(NoAnswer::Network));
    drain(&mut a);
    a.reset();
    drain(&mut a);
    flag_removed(&mut a);
    // The copy in Web Storage: an older attempt, another basket's, paid.
    let mut other =
        crate::core::record::Record::decode(idb.as_deref().expect("stored")).expect("readable");
    other.key = "0f0f0f0f-0000-4000-8000-000000000001".into();
    other.fingerprint = Some("fp0".into());
    other.state = State::Succeeded;
    other.response = Some(crate::core::record::StoredResponse {
        status: 201,
        body: "{}".into(),
        replayed: false,
    });
    other.created_at = 1_000.0;
    let copy = a.rec_key().to_string();
    a.host
        .maps
        .insert((StorageKind::Local as u8, copy), other.encode());
    let host = TestHost {
        now: 6_000.0,
        seed: 9,
        maps: a.host.maps.clone(),
    };
    let mut p = Scope::open(host, options().into(), false);
    drain(&mut p);
    assert_eq!(p.record().key, other.key);
    // Pay, then Pay pressed again (which resumes the first, left unknown).
    for _ in 0..2 {
        let cmds = pay_again(&mut p, &mut idb);
        assert!(sent(&cmds).is_none(), "sent under {old}: {cmds:?}");
        let abandoned = cmds.iter().any(|c| {
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
        assert!(abandoned, "{cmds:?}");
    }
}
