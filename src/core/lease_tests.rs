use super::*;

const NOW: f64 = 1_700_000_000_000.0;

#[test]
fn encode_decode_round_trip() {
    let l = Lease::new("tab-1", NOW);
    assert_eq!(l.until_ms, NOW + LEASE_MS);
    assert_eq!(l.encode(), "tab-1|1700000010000");
    assert_eq!(Lease::decode(&l.encode()), Some(l));
    // An owner id containing the separator survives: the time is after the last `|`.
    let l = Lease {
        owner: "a|b".into(),
        until_ms: 5.0,
    };
    assert_eq!(Lease::decode(&l.encode()), Some(l));
}

#[test]
fn malformed_leases_decode_to_none() {
    for s in [
        "",
        "tab",
        "|123",
        "tab|",
        "tab|-1",
        "tab|1.5",
        "tab|12x",
        "tab|99999999999999999999999",
    ] {
        assert_eq!(Lease::decode(s), None, "{s:?}");
    }
}

#[test]
fn acquire_rules() {
    let held = Lease::new("other", NOW);
    assert!(can_acquire(None, "me", NOW));
    // Held by someone else and live: wait.
    assert!(!can_acquire(Some(&held), "me", NOW));
    assert!(!can_acquire(Some(&held), "me", NOW + LEASE_MS - 1.0));
    // Lapsed: take it.
    assert!(can_acquire(Some(&held), "me", NOW + LEASE_MS));
    assert!(can_acquire(Some(&held), "me", NOW + LEASE_MS + 1.0));
    // Our own lease: renew any time.
    assert!(can_acquire(Some(&Lease::new("me", NOW)), "me", NOW));
}

#[test]
fn lease_from_a_clock_far_ahead_is_taken_over() {
    let future = Lease {
        owner: "other".into(),
        until_ms: NOW + LEASE_MS * 100.0,
    };
    assert!(can_acquire(Some(&future), "me", NOW));
    let edge = Lease {
        owner: "other".into(),
        until_ms: NOW + LEASE_MS,
    };
    assert!(!can_acquire(Some(&edge), "me", NOW));
}

#[test]
fn a_held_lease_is_renewed_several_times_before_it_lapses() {
    // Even with one renewal delayed by a throttled timer, two more land in time.
    assert!(LEASE_RENEW_MS as f64 * 3.0 < LEASE_MS);
    const { assert!(LEASE_POLL_MS < LEASE_RENEW_MS) };
}

#[test]
fn only_our_own_lease_is_renewed_or_released() {
    let ours = Lease::new("me", NOW);
    // Lapsed but untouched, it is still ours to renew: no other tab took it.
    assert!(is_ours(Some(&ours), "me"));
    // Taken by another tab after ours lapsed, or gone: not ours.
    assert!(!is_ours(Some(&Lease::new("other", NOW)), "me"));
    assert!(!is_ours(None, "me"));
}
