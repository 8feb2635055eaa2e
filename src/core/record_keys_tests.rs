//! The names a record is stored under (its record, ended and quarantine keys),
//! reading them back, and the sweep's rule of what is due; and the TTL limit.

use super::*;
use crate::core::sweep::{flag_due, sweep_due};

const KEY: &str = "8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f";
const NOW: f64 = 1_700_000_000_000.0;

#[test]
fn storage_key_names() {
    assert_eq!(record_key("idemkey", "cart-42"), "idemkey:v1:cart-42");
    assert_eq!(
        quarantine_key("idemkey", "cart-42", 1_700_000_000_123.0),
        "idemkey:corrupt:cart-42:1700000000123"
    );
}

#[test]
fn storage_key_parsing() {
    assert_eq!(
        parse_record_key("idemkey", "idemkey:v1:cart-42"),
        Some("cart-42")
    );
    // Scopes may contain the separator.
    assert_eq!(
        parse_record_key("idemkey", &record_key("idemkey", "a:v1:b")),
        Some("a:v1:b")
    );
    for k in [
        "idemkey:v1:",
        "idemkey:lease:cart",
        "idemkey:corrupt:cart:1",
        "other:v1:cart",
        "idemkeyx:v1:cart",
        "idem:v1:cart",
        "idemkey:v2:cart",
        "idemkey",
        "",
        "cart",
    ] {
        assert_eq!(parse_record_key("idemkey", k), None, "{k:?}");
    }
    // A namespace that prefixes another one does not capture its records.
    assert_eq!(parse_record_key("shop", "shop2:v1:x"), None);
}

#[test]
fn quarantine_key_parsing() {
    let k = quarantine_key("idemkey", "cart-42", 1_700_000_000_123.0);
    assert_eq!(
        parse_quarantine_key("idemkey", &k),
        Some(("cart-42", 1_700_000_000_123))
    );
    // Scopes may contain the separator; the time is after the last one.
    let k = quarantine_key("idemkey", "a:corrupt:b:7", 5.0);
    assert_eq!(
        parse_quarantine_key("idemkey", &k),
        Some(("a:corrupt:b:7", 5))
    );
    for k in [
        "idemkey:corrupt:cart",
        "idemkey:corrupt:cart:",
        "idemkey:corrupt::5",
        "idemkey:corrupt:cart:12x",
        "idemkey:corrupt:cart:-5",
        "idemkey:corrupt:cart:99999999999999999",
        "idemkey:v1:cart",
        "idemkey:lease:cart",
        "idemkeyx:corrupt:cart:5",
        "other:corrupt:cart:5",
        "",
    ] {
        assert_eq!(parse_quarantine_key("idemkey", k), None, "{k:?}");
    }
}

#[test]
fn sweep_due_expired_records_and_old_quarantine_only() {
    let ns = "shop";
    let live = Record::new(KEY, "live", NOW, 60_000.0);
    let old = Record::new(KEY, "old", NOW - 120_000.0, 60_000.0);
    let rk = |s| record_key(ns, s);
    assert!(!sweep_due(
        ns,
        &rk("live"),
        &live.encode(),
        NOW,
        Record::decode
    ));
    assert!(sweep_due(
        ns,
        &rk("old"),
        &old.encode(),
        NOW,
        Record::decode
    ));
    // Unreadable records are open()'s to set aside, never sweep's to delete.
    assert!(!sweep_due(
        ns,
        &rk("junk"),
        "not a record",
        NOW,
        Record::decode
    ));

    let week = QUARANTINE_RETENTION_MS;
    assert_eq!(week, 604_800_000.0, "7 days");
    let q = |age: f64| quarantine_key(ns, "cart:1", NOW - age);
    assert!(!sweep_due(ns, &q(0.0), "{not json", NOW, Record::decode));
    assert!(!sweep_due(
        ns,
        &q(week - 1.0),
        "{not json",
        NOW,
        Record::decode
    ));
    assert!(sweep_due(ns, &q(week), "{not json", NOW, Record::decode));
    assert!(sweep_due(ns, &q(week * 10.0), "", NOW, Record::decode));
    // A copy stamped in the future (clock moved back) is kept.
    assert!(!sweep_due(ns, &q(-week * 10.0), "", NOW, Record::decode));

    // Leases an older release left, the probe, other namespaces and unknown keys are never swept.
    for k in [
        "shop:proposed:old".into(),
        "shop:lease:cart".into(),
        "shop:probe".into(),
        quarantine_key("shopx", "cart", 0.0),
        record_key("shopx", "old"),
        "shop:corrupt:cart:nope".into(),
        "shop:other:1".into(),
    ] {
        assert!(
            !sweep_due(ns, &k, &old.encode(), NOW + week * 100.0, Record::decode),
            "{k}"
        );
    }
}

#[test]
fn limit_ttl_shortens_a_longer_stored_ttl_and_never_extends_one() {
    let mut r = Record::new(KEY, "cart", 1_000.0, 86_400_000.0);
    r.limit_ttl(5_000.0);
    assert_eq!(r.expires_at, 6_000.0);
    assert!(!r.is_expired(5_999.0));
    assert!(r.is_expired(6_000.0));
    // A longer TTL today does not revive or extend a key made under a shorter one.
    r.limit_ttl(86_400_000.0);
    assert_eq!(r.expires_at, 6_000.0);
}

#[test]
fn sweep_deletes_the_marks_of_ended_attempts_once_every_key_they_name_expired() {
    let ns = "shop";
    let at = ended_key(ns, "cart");
    assert_eq!(at, "shop:ended:cart");
    let mark = |until: f64| format!("{KEY} {} {}", (NOW - 10.0) as u64, until as u64);
    assert!(!sweep_due(ns, &at, &mark(NOW + 1.0), NOW, Record::decode));
    assert!(sweep_due(ns, &at, &mark(NOW), NOW, Record::decode));
    // Unreadable marks name no key that could still be live.
    assert!(sweep_due(ns, &at, "garbage", NOW, Record::decode));
}

/// The flag that a scope has ended attempts in a backend: due once no mark of its scope is
/// listed beside it and the end it was last written for has expired, and not before.
#[test]
fn sweep_deletes_a_scopes_flag_once_no_mark_of_the_scope_is_left() {
    let ns = "shop";
    // The mark line the flag holds: its end's key expired before now.
    let old = format!("{KEY} 1 {}", NOW as u64 - 1);
    let flag = ends_key(ns, "cart");
    assert_eq!(flag, "shop:ends:cart");
    let mark = |scope: &str| ended_key(ns, scope) + ":" + KEY;
    let listed = |keys: &[&str]| keys.iter().map(|k| String::from(*k)).collect::<Vec<_>>();
    // Alone, or beside another scope's marks, the record, another namespace's mark.
    for others in [
        listed(&[]),
        listed(&[&mark("cart-2"), &mark("car"), &record_key(ns, "cart")]),
        listed(&[
            &(ended_key("shop2", "cart") + ":" + KEY),
            &ends_key(ns, "cart-2"),
        ]),
    ] {
        let mut keys = others.clone();
        keys.push(flag.clone());
        assert!(
            flag_due(ns, &flag, &old, NOW, &keys),
            "kept beside {others:?}"
        );
        // A mark of its scope keeps it, whatever the sweep does with that mark.
        keys.push(mark("cart"));
        assert!(
            !flag_due(ns, &flag, &old, NOW, &keys),
            "deleted beside its mark"
        );
    }
    // A mark of a scope whose name goes on after a `:` keeps it too (a listing, no mark).
    assert!(!flag_due(
        ns,
        &flag,
        &old,
        NOW,
        &listed(&[&flag, &mark("cart:x")])
    ));
    // Alone, but written for an end whose key is still live: its mark may not have reached
    // this page yet (written after the flag), and is never hidden so.
    let live = format!("{KEY} 1 {}", NOW as u64 + 1);
    assert!(!flag_due(ns, &flag, &live, NOW, &listed(&[&flag])));
    // Only a flag is due so: not a mark, a record, a key this crate does not know, nor a
    // flag with no scope or of another namespace.
    let all = listed(&[&flag]);
    for k in [
        mark("cart"),
        record_key(ns, "cart"),
        "shop:ends:".into(),
        "shop:endsx".into(),
        ends_key("shop2", "cart"),
        "shop".into(),
    ] {
        assert!(!flag_due(ns, &k, &old, NOW, &all), "{k} due");
    }
}
