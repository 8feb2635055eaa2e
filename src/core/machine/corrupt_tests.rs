//! IndexedDB's copy of the record can no longer be read (edited by hand, written by another
//! release) while the Web Storage mirror holds a readable one: the unreadable text is set
//! aside, and the checkout goes on from the mirror's copy, never from a new key.
//! [P-corrupt-set-aside]

use super::*;
use alloc::rc::Rc;

/// The attempt succeeded and both copies hold it; then IndexedDB's copy becomes unreadable.
/// The user presses Pay again (same payload) in a tab that shows the attempt from
/// localStorage: the unreadable copy is set aside, and the succeeded attempt, read from
/// localStorage, answers; nothing is sent under a new key.
#[test]
fn an_unreadable_indexeddb_copy_of_a_succeeded_attempt_gives_way_to_the_readable_mirror() {
    let (_, mut s, idb) = two_tabs();
    let key = s.record().key.clone();
    // IndexedDB's copy can no longer be read; localStorage's is intact.
    let bad = idb.clone().unwrap().replace(r#""v":1"#, r#""v":2"#);
    // Pay pressed again after the answer.
    s.submit("{}".into(), "fp".into(), Rc::new(options()));
    let cmds = drain(&mut s);
    assert!(
        matches!(cmds.as_slice(), [Command::IdbPeek { .. }]),
        "{cmds:?}"
    );
    s.handle(Input::IdbRead(Ok(Some(bad.clone()))));
    drain(&mut s);
    s.handle(Input::LockGranted);
    drain(&mut s);
    s.handle(Input::IdbRead(Ok(Some(bad))));
    let mut cmds = drain(&mut s);
    if cmds.iter().any(|c| matches!(c, Command::IdbPut { .. })) {
        s.handle(Input::IdbWritten(Ok(())));
        cmds.extend(drain(&mut s));
    }
    let resent = sent(&cmds).map(|r| r.key_value.clone());
    assert!(
        resent.is_none() || resent.as_deref() == Some(key.as_str()),
        "the succeeded order ({key}) was sent again under {resent:?}"
    );
}
