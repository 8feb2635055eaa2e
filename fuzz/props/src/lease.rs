//! Lease decoding (the storage-lease fallback of the cross-tab lock).
//!
//! Properties: a decoded lease re-encodes to one that decodes the same; its owner may
//! always renew it; another tab may take it only once it lapsed, or when it claims more
//! than one lease length ahead (a clock that jumped).

use crate::clock_and_rest;
use idemkey::core::lease::{can_acquire, Lease, LEASE_MS};

/// Decodes `data` as a stored lease and checks who may take it at a time from `data`.
pub fn check(data: &[u8]) {
    let (now, rest) = clock_and_rest(data, 0.0);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let Some(l) = Lease::decode(text) else {
        assert!(
            !can_acquire_blocked(text),
            "an unreadable lease {text:?} must count as none"
        );
        return;
    };
    assert!(!l.owner.is_empty());
    assert!(l.until_ms.fract() == 0.0 && l.until_ms >= 0.0);
    let enc = l.encode();
    assert_eq!(
        Lease::decode(&enc).as_ref(),
        Some(&l),
        "{text:?} -> {enc:?}"
    );
    assert!(can_acquire(Some(&l), &l.owner, now), "the owner may renew");
    let mut other = l.owner.clone();
    other.push('x');
    let live = l.until_ms > now && l.until_ms - now <= LEASE_MS;
    assert_eq!(can_acquire(Some(&l), &other, now), !live, "{l:?} at {now}");
    let fresh = Lease::new(&other, now);
    assert_eq!(
        Lease::decode(&fresh.encode()).map(|f| f.until_ms),
        Some(fresh.until_ms.floor())
    );
}

/// A text that does not decode never blocks anyone (the lock treats it as no lease).
fn can_acquire_blocked(text: &str) -> bool {
    !can_acquire(Lease::decode(text).as_ref(), "me", 0.0)
}
