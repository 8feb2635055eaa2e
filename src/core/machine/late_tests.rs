//! A retry's wake that comes late: the browser delays a background tab's timers (Chromium
//! and Safari by seconds to a minute; a frozen tab until it is shown again). A wait ends in
//! a try only while the submit's deadline and the key's lifetime both allow one.
//! [P-deadline] [P-ttl-never-reused]

use super::*;
use crate::core::record::Record;

/// Runs a submit to its first try, which gets a 503 and a backoff wait of under a second,
/// then feeds the retry's wake `late` ms after the page opened: the commands after it (and
/// after the retry's record is committed, if one is written).
fn retry_woken_at(late: f64) -> (Vec<Command>, Record) {
    let (mut s, mut idb) = settled(TestHost::default());
    first_try(&mut s, &mut idb, options());
    s.host.now += 500.0;
    s.handle(answer(503, None));
    let cmds = drain(&mut s);
    assert!(
        cmds.iter()
            .any(|c| matches!(c, Command::Wake { wake: Wake::Retry, ms } if *ms < 1000.0)),
        "{cmds:?}"
    );
    s.host.now = late;
    s.handle(Input::Woken(Wake::Retry));
    let mut cmds = drain(&mut s);
    if cmds.iter().any(|c| matches!(c, Command::IdbPut { .. })) {
        s.handle(Input::IdbWritten(Ok(())));
        cmds.extend(drain(&mut s));
    }
    (cmds, s.record().clone())
}

/// The submit's settled outcome-unknown reason, if it ended so.
fn unknown_reason(cmds: &[Command]) -> Option<String> {
    cmds.iter().find_map(|c| match c {
        Command::Settle {
            outcome: Err(Error::OutcomeUnknown { reason, .. }),
            ..
        } => Some(reason.clone()),
        _ => None,
    })
}

#[test]
fn a_retry_woken_after_the_deadline_sends_nothing_and_ends_outcome_unknown() {
    // deadlineMs is 60 s: the wake comes 70 s in.
    let (cmds, rec) = retry_woken_at(70_000.0);
    assert!(
        sent(&cmds).is_none(),
        "a try 70 s into a 60 s budget: {cmds:?}"
    );
    assert_eq!(
        unknown_reason(&cmds).as_deref(),
        Some("status-503"),
        "{cmds:?}"
    );
    assert_eq!(
        rec.state,
        State::Pending,
        "the key is kept for the next submit()"
    );
    assert!(cmds.contains(&Command::Unlock), "{cmds:?}");
}

#[test]
fn a_retry_woken_after_the_key_expired_sends_nothing() {
    // ttlSeconds is a day: the tab was frozen for 25 hours.
    let late = 25.0 * 3600.0 * 1000.0;
    let (cmds, rec) = retry_woken_at(late);
    assert!(rec.is_expired(late));
    assert!(sent(&cmds).is_none(), "an expired key is sent: {cmds:?}");
    assert_eq!(
        unknown_reason(&cmds).as_deref(),
        Some("status-503"),
        "{cmds:?}"
    );
}

#[test]
fn a_retry_woken_within_the_deadline_is_sent() {
    let (cmds, rec) = retry_woken_at(30_000.0);
    assert_eq!(
        sent(&cmds).map(|r| r.key_value.clone()),
        Some(rec.key),
        "{cmds:?}"
    );
}
