//! Host tests of a stored answer given without the lock: from the page's memory where the
//! page committed it to IndexedDB itself, read there where it shows another tab's; and
//! what still sends such a submit the locked way (an end mark another tab wrote, a newer
//! copy in Web Storage). [P-cached-no-lock] [P-own-answer-kept]

use super::*;
use alloc::rc::Rc;

/// The commands of a Pay pressed again, with the same payload.
fn pay_again(s: &mut Scope<TestHost>) -> Vec<Command> {
    s.submit("{}".into(), "fp".into(), Rc::new(options()));
    drain(s)
}

/// Whether `cmds` resolve the submit with the stored answer of `key`, and do nothing else.
fn answered_alone(cmds: &[Command], key: &str) -> bool {
    matches!(
        cmds,
        [Command::Settle {
            outcome: Ok(Reply {
                from_cache: true,
                status: 201,
                key: k,
                ..
            }),
            ..
        }] if k == key
    )
}

/// Whether `cmds` send the submit the locked way: the scope's lock asked for, nothing else.
fn locked(cmds: &[Command]) -> bool {
    matches!(cmds, [Command::Lock { .. }])
}

#[test]
fn a_page_gives_the_answer_it_committed_from_memory_with_no_read_and_no_lock() {
    let (mut s, _) = paid_page();
    let key = s.record().key.clone();
    let cmds = pay_again(&mut s);
    assert!(answered_alone(&cmds, &key), "{cmds:?}");
}

#[test]
fn a_page_gives_the_answer_it_committed_after_storage_lost_the_record() {
    let (mut s, _) = paid_page();
    let key = s.record().key.clone();
    // The origin's storage is cleared under the page: IndexedDB and the mirror lose it.
    s.host.maps.clear();
    let cmds = pay_again(&mut s);
    assert!(answered_alone(&cmds, &key), "{cmds:?}");
}

#[test]
fn a_page_showing_another_tabs_answer_reads_it_from_indexeddb_without_the_lock() {
    let (_a, mut b, idb) = two_tabs();
    let key = b.record().key.clone();
    let cmds = pay_again(&mut b);
    assert!(
        matches!(cmds.as_slice(), [Command::IdbPeek { .. }]),
        "{cmds:?}"
    );
    b.handle(Input::IdbRead(Ok(idb)));
    let cmds = drain(&mut b);
    assert!(answered_alone(&cmds, &key), "{cmds:?}");
}

// P-finish-durable: another tab's finish(), reaching this tab's localStorage before its
// notice, sends the Pay of the ended attempt's payload the locked way.
#[test]
fn an_end_another_tab_wrote_sends_the_page_the_locked_way_not_to_its_answer() {
    let (mut a, mut b, _) = two_tabs();
    assert!(b.finish());
    hand_over(&b, &mut a, ":end");
    let cmds = pay_again(&mut a);
    assert!(locked(&cmds), "{cmds:?}");
}

#[test]
fn a_newer_copy_in_web_storage_sends_the_page_the_locked_way() {
    let (mut s, _) = paid_page();
    // Another tab stored the attempt again (its `rev` counted up); its copy reached this
    // tab's localStorage, its notice not yet.
    let mut newer = s.record().clone();
    newer.rev += 1;
    let at = (StorageKind::Local as u8, s.rec_key.clone());
    s.host.maps.insert(at, newer.encode());
    let cmds = pay_again(&mut s);
    assert!(locked(&cmds), "{cmds:?}");
}

#[test]
fn a_page_past_its_answers_expiry_goes_the_locked_way() {
    let (mut s, _) = paid_page();
    s.host.now += 86_400_000.0 + 1.0;
    let cmds = pay_again(&mut s);
    assert!(locked(&cmds), "{cmds:?}");
}

/// After Pay of a changed basket, refused once the lock holder's read showed the same
/// record again, the origin's storage is cleared; the paid basket is paid again.
#[test]
fn a_page_keeps_the_answer_it_committed_after_a_pay_went_the_locked_way() {
    let (mut s, idb) = paid_page();
    let key = s.record().key.clone();
    s.submit("[]".into(), "other".into(), Rc::new(options()));
    let cmds = drain(&mut s);
    let seen = run(&mut s, &mut idb.clone(), cmds);
    assert!(
        seen.iter().any(|c| matches!(
            c,
            Command::Settle {
                outcome: Err(Error::PayloadConflict { .. }),
                ..
            }
        )),
        "{seen:?}"
    );
    s.host.maps.clear();
    let cmds = pay_again(&mut s);
    assert!(answered_alone(&cmds, &key), "{cmds:?}");
}
