//! Host tests of what a later page sees after `finish()` or `reset()` returned and the page
//! left at once (a navigation, a reload, a closed tab): its clean-up with the lock never
//! ran, or IndexedDB refused it. The later page shares the first one's Web Storage (but for
//! page memory) and IndexedDB.

use super::*;
use crate::core::record::Record;

/// The next page of the same browser at `now`: Web Storage carried over, page memory gone.
fn next_page(h: &TestHost, now: f64) -> TestHost {
    let mut maps = h.maps.clone();
    maps.retain(|(kind, _), _| *kind != StorageKind::Memory as u8);
    TestHost {
        now,
        seed: h.seed ^ 0x5eed,
        maps,
    }
}

/// The same basket paid again in page `s`: every command until its first try or its end.
pub(super) fn pay_again(s: &mut Scope<TestHost>, idb: &mut Option<String>) -> Vec<Command> {
    s.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(s);
    run(s, idb, cmds)
}

/// The order was paid again for real: a try under `key`, not the old attempt's answer.
pub(super) fn sent_under(cmds: &[Command], key: &str) {
    let cached = cmds.iter().any(|c| {
        matches!(
            c,
            Command::Settle {
                outcome: Ok(Reply {
                    from_cache: true,
                    ..
                }),
                ..
            }
        )
    });
    assert!(!cached, "answered from the ended attempt: {cmds:?}");
    assert_eq!(
        sent(cmds).map(|r| r.key_value.as_str()),
        Some(key),
        "{cmds:?}"
    );
}

/// A page that shows the scope after `gone`'s finish() or reset() shows a new attempt, and
/// pays the basket again under that attempt's key.
pub(super) fn later_page_pays_anew(
    gone: &Scope<TestHost>,
    old_key: &str,
    idb: &mut Option<String>,
) {
    let mut later = Scope::open(next_page(&gone.host, 5_000.0), options().into(), false);
    let opened = drain(&mut later);
    run(&mut later, idb, opened);
    let key = later.record().key.clone();
    assert_ne!(key, old_key, "the later page shows the ended attempt");
    assert_eq!(later.record().state, State::Fresh);
    sent_under(&pay_again(&mut later, idb), &key);
}

// P-finish-durable
#[test]
fn finish_then_leaving_at_once_the_next_page_pays_the_same_basket_under_a_new_key() {
    let (mut a, mut idb) = paid_page();
    let old = a.record().key.clone();
    a.host.now = 1_000.0;
    a.finish();
    drain(&mut a);
    later_page_pays_anew(&a, &old, &mut idb);
}

// P-reset-durable
#[test]
fn reset_then_leaving_at_once_the_next_page_pays_the_same_basket_under_a_new_key() {
    let (mut a, mut idb) = paid_page();
    let old = a.record().key.clone();
    a.host.now = 1_000.0;
    a.reset();
    drain(&mut a);
    later_page_pays_anew(&a, &old, &mut idb);
}

// P-finish-durable: another tab showing the paid attempt
#[test]
fn a_tab_that_showed_the_paid_attempt_pays_the_next_order_anew_after_finish_elsewhere() {
    let (mut a, mut idb) = paid_page();
    let old = a.record().key.clone();
    let mut b = Scope::open(next_page(&a.host, 500.0), options().into(), false);
    let opened = drain(&mut b);
    run(&mut b, &mut idb, opened);
    assert_eq!(b.record().key, old);
    a.host.now = 1_000.0;
    a.finish();
    drain(&mut a);
    // Tab B reads the origin's Web Storage as tab A left it.
    b.host.maps = next_page(&a.host, 0.0).maps;
    b.host.now = 2_000.0;
    let cmds = pay_again(&mut b, &mut idb);
    let key = sent(&cmds).map(|r| r.key_value.clone());
    assert_ne!(key.as_deref(), Some(old.as_str()), "{cmds:?}");
    sent_under(&cmds, key.as_deref().unwrap_or("no try"));
}

// P-wire-try-reported: the try on the wire when finish() is called still reports its answer
#[test]
fn a_try_on_the_wire_at_finish_reports_its_charge_and_later_pages_do_not_show_it() {
    let (mut a, mut idb) = settled(TestHost::default());
    let old = a.record().key.clone();
    first_try(&mut a, &mut idb, options());
    a.host.now = 1_000.0;
    a.finish();
    drain(&mut a);
    a.handle(answer(201, None));
    let cmds = drain(&mut a);
    commit(&mut idb, &cmds);
    assert!(
        cmds.iter().any(|c| matches!(
            c,
            Command::Settle { outcome: Ok(Reply { status: 201, key, .. }), .. } if *key == old
        )),
        "{cmds:?}"
    );
    a.handle(Input::Woken(Wake::AnswerTurn));
    commit(&mut idb, &drain(&mut a));
    // The page leaves before IndexedDB answers, with the answer stored under the old key.
    later_page_pays_anew(&a, &old, &mut idb);
}

// P-finish-final: the try on the wire at reset() is answered once its key expired (a tab
// frozen that long) and another page's sweep deleted the expired mark: the answer is
// reported, and the page still shows its new key, as open() there does.
#[test]
fn a_try_on_the_wire_at_reset_answered_after_its_mark_was_swept_keeps_the_new_key() {
    let (mut a, mut idb) = settled(TestHost::default());
    let old = a.record().key.clone();
    let until = a.record().expires_at;
    first_try(&mut a, &mut idb, options());
    a.host.now = 1_000.0;
    a.reset();
    drain(&mut a);
    let new = a.record().key.clone();
    // Past the ended key's expiry, not yet the new one's (made at the reset).
    a.host.now = until + 500.0;
    let now = a.host.now;
    a.host
        .maps
        .retain(|(_, k), v| !crate::core::sweep::sweep_due("idemkey", k, v, now, Record::decode));
    a.handle(answer(201, None));
    let cmds = drain(&mut a);
    assert!(
        cmds.iter().any(|c| matches!(
            c,
            Command::Settle { outcome: Ok(Reply { status: 201, key, .. }), .. } if *key == old
        )),
        "{cmds:?}"
    );
    assert_eq!(a.record().key, new, "{cmds:?}");
    a.reopen();
    assert_eq!(a.record().key, new);
    assert_eq!(a.record().state, State::Fresh);
}

// A page that heard nothing of a finish() elsewhere sends no more tries of that key
#[test]
fn a_page_that_slept_through_a_finish_elsewhere_sends_no_more_tries_of_its_key() {
    let (mut a, mut idb) = settled(TestHost::default());
    let old = a.record().key.clone();
    first_try(&mut a, &mut idb, options());
    a.handle(answer(503, None));
    let cmds = drain(&mut a);
    assert!(cmds.iter().any(|c| matches!(
        c,
        Command::Wake {
            wake: Wake::Retry,
            ..
        }
    )));
    // Meanwhile another page of the tab's history (or another tab) showed the attempt and
    // finished it; this page was in the back/forward cache and heard nothing.
    let mut other = Scope::open(next_page(&a.host, 500.0), options().into(), false);
    drain(&mut other);
    assert_eq!(other.record().key, old);
    other.finish();
    drain(&mut other);
    a.host.maps = next_page(&other.host, 0.0).maps;
    a.host.now = 2_000.0;
    a.handle(Input::Woken(Wake::Retry));
    let cmds = drain(&mut a);
    assert!(sent(&cmds).is_none(), "{cmds:?}");
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

// P-end-without-clock: a clock set back before the next order makes its record look older
// than the attempt finish() ended; the next page still shows and resumes the next order's.
#[test]
fn a_clock_set_back_does_not_bring_back_the_finished_attempt_over_the_next_one() {
    let ended = Record::new(
        "11111111-1111-4111-8111-111111111111",
        "cart-1",
        1_000_000.0,
        86_400_000.0,
    );
    let mut next = Record::new(
        "22222222-2222-4222-8222-222222222222",
        "cart-1",
        1_000_000.0 - 60_000.0,
        86_400_000.0,
    );
    next.state = State::Pending;
    next.fingerprint = Some("f1:next".into());
    next.attempts = 1;
    let at = String::from("idemkey:v1:cart-1");
    let mark = crate::core::ended::Mark {
        key: ended.key.clone(),
        bound: true,
        until: ended.expires_at,
    };
    let mut maps = BTreeMap::new();
    maps.insert((StorageKind::Local as u8, at.clone()), ended.encode());
    maps.insert((StorageKind::Session as u8, at), next.encode());
    maps.insert(
        (
            StorageKind::Local as u8,
            format!("idemkey:ended:cart-1:{}", ended.key),
        ),
        mark.line(),
    );
    let host = TestHost {
        now: 1_000_000.0 - 50_000.0,
        seed: 3,
        maps,
    };
    let s = Scope::open(host, options().into(), false);
    assert_eq!(
        s.record().key,
        next.key,
        "the page shows the ended attempt again"
    );
    assert_eq!(s.record().state, State::Pending);
}

// P-finish-durable: two tabs end attempts before either tab's localStorage has the other's
// write (a browser hands a tab's writes to the others late); the browser then holds the
// later writer's value for each key it wrote. Both ends still hold for a later page.
#[test]
fn two_tabs_ending_before_either_heard_the_other_both_ends_hold_for_a_later_page() {
    let (mut a, mut idb) = paid_page();
    let old = a.record().key.clone();
    // Tab B opened before A's writes reached its copy of localStorage: a key of its own.
    let mut b = Scope::open(
        next_page(&TestHost::default(), 900.0),
        options().into(),
        false,
    );
    drain(&mut b);
    a.host.now = 1_000.0;
    a.finish();
    drain(&mut a);
    b.host.now = 1_001.0;
    b.reset();
    drain(&mut b);
    let mut both = next_page(&a.host, 1_002.0);
    for (at, text) in &b.host.maps {
        both.maps.insert(at.clone(), text.clone());
    }
    let gone = Scope::open(both, options().into(), false);
    later_page_pays_anew(&gone, &old, &mut idb);
}

// P-end-without-clock: the clock was set back 60 s between two attempts of the basket; an
// older copy of the first, in this page's memory, still looks the later one by its time.
// The page that pays takes the second attempt's answer, which IndexedDB holds.
#[test]
fn a_clock_set_back_between_two_attempts_does_not_bring_back_the_first_at_the_lock() {
    let mut first = Record::new(
        "11111111-1111-4111-8111-111111111111",
        "cart-1",
        1_000_000.0,
        86_400_000.0,
    );
    first.state = State::Failed;
    first.fingerprint = Some("fp".into());
    first.attempts = 1;
    first.rev = 2;
    let mut second = Record::new(
        "22222222-2222-4222-8222-222222222222",
        "cart-1",
        1_000_000.0 - 60_000.0,
        86_400_000.0,
    );
    second.state = State::Succeeded;
    second.fingerprint = Some("fp".into());
    second.attempts = 1;
    second.rev = 4;
    second.response = Some(crate::core::record::StoredResponse {
        status: 201,
        body: "{}".into(),
        replayed: false,
    });
    let mut maps = BTreeMap::new();
    maps.insert(
        (StorageKind::Memory as u8, "idemkey:v1:cart-1".into()),
        first.encode(),
    );
    let host = TestHost {
        now: 1_000_000.0 - 50_000.0,
        seed: 5,
        maps,
    };
    let mut idb = Some(second.encode());
    let mut s = Scope::open(host, options().into(), false);
    let opened = drain(&mut s);
    run(&mut s, &mut idb, opened);
    let cmds = pay_again(&mut s, &mut idb);
    assert!(sent(&cmds).is_none(), "a try went out: {cmds:?}");
    let answered = cmds.iter().find_map(|c| match c {
        Command::Settle { outcome: Ok(r), .. } => Some((r.key.clone(), r.status)),
        _ => None,
    });
    assert_eq!(answered, Some((second.key.clone(), 201)), "{cmds:?}");
}

// P-finish-durable: the mark of a paid attempt, then another tab's notice that it ended the
// same key where it showed it fresh (a record an older release stored at `reset()`, say):
// the end of the paid attempt still holds for a later page.
#[test]
fn a_later_end_of_the_same_key_seen_fresh_does_not_bring_back_the_paid_attempt() {
    let (mut a, mut idb) = paid_page();
    let old = a.record().key.clone();
    a.host.now = 1_000.0;
    a.finish();
    drain(&mut a);
    hear_end(&mut a, &old, false);
    let later = Scope::open(next_page(&a.host, 1_500.0), options().into(), false);
    later_page_pays_anew(&later, &old, &mut idb);
}
