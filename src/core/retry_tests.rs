use super::*;

const POLICY: RetryPolicy = RetryPolicy {
    max_retries: 5,
    base_ms: 250,
    max_ms: 10_000,
    deadline_ms: 60_000,
};

#[test]
fn every_status_is_classified_per_the_table() {
    const RETRY: [u16; 8] = [408, 409, 425, 429, 500, 502, 503, 504];
    for s in 100u16..=599 {
        let want = if (200..300).contains(&s) {
            Class::Success
        } else if RETRY.contains(&s) {
            Class::Retry
        } else {
            Class::Failure
        };
        assert_eq!(classify(s), want, "status {s}");
        assert_eq!(
            TryOutcome::Response(s).is_retryable(),
            want == Class::Retry,
            "status {s}"
        );
    }
    // Spot checks that a table typo would not catch.
    assert_eq!(classify(201), Class::Success);
    assert_eq!(classify(299), Class::Success);
    assert_eq!(classify(304), Class::Failure);
    assert_eq!(classify(400), Class::Failure);
    assert_eq!(classify(402), Class::Failure);
    assert_eq!(classify(422), Class::Failure);
    assert_eq!(classify(501), Class::Failure);
    assert_eq!(classify(505), Class::Failure);
    // Outside 100..=599 (a broken proxy) is never success.
    assert_eq!(classify(0), Class::Failure);
    assert_eq!(classify(999), Class::Failure);
}

#[test]
fn network_errors_and_timeouts_are_retryable() {
    assert!(TryOutcome::NetworkError.is_retryable());
    assert!(TryOutcome::Timeout.is_retryable());
}

#[test]
fn reasons() {
    assert_eq!(TryOutcome::Response(503).reason(), "status-503");
    assert_eq!(TryOutcome::Response(429).reason(), "status-429");
    assert_eq!(TryOutcome::NetworkError.reason(), "network-error");
    assert_eq!(TryOutcome::Timeout.reason(), "timeout");
}

fn delay(p: &RetryPolicy, n: u32, r: f64) -> u32 {
    match p.next(n, 0.0, None, r) {
        Next::Retry { delay_ms } => delay_ms,
        Next::GiveUp => panic!("gave up at retry {n}"),
    }
}

#[test]
fn cap_doubles_up_to_max() {
    let caps: Vec<u32> = (0..8).map(|n| POLICY.cap_ms(n)).collect();
    assert_eq!(caps, [250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
}

#[test]
fn cap_is_overflow_safe_at_large_n() {
    let p = RetryPolicy {
        max_retries: u32::MAX,
        base_ms: u32::MAX,
        max_ms: u32::MAX,
        deadline_ms: u32::MAX,
    };
    for n in [30, 31, 32, 33, 63, 64, 65, 1000, u32::MAX - 1] {
        assert_eq!(p.cap_ms(n), u32::MAX, "n={n}");
        assert_eq!(POLICY.cap_ms(n), 10_000, "n={n}");
    }
    let zero = RetryPolicy {
        base_ms: 0,
        ..POLICY
    };
    assert_eq!(zero.cap_ms(1000), 0);
}

#[test]
fn full_jitter_bounds() {
    let p = RetryPolicy {
        max_retries: 100,
        deadline_ms: u32::MAX,
        ..POLICY
    };
    for n in 0..100 {
        let cap = p.cap_ms(n);
        assert_eq!(delay(&p, n, 0.0), 0, "rand 0 gives 0 at n={n}");
        let hi = delay(&p, n, 0.999_999_999);
        assert!(
            hi <= cap && hi + 1 >= cap,
            "rand ~1 gives ~cap at n={n}: {hi} vs {cap}"
        );
        for k in 1..20 {
            let d = delay(&p, n, k as f64 / 20.0);
            assert!(d <= cap, "n={n} k={k}: {d} > {cap}");
        }
    }
    assert_eq!(delay(&p, 2, 0.5), 500);
}

#[test]
fn out_of_range_samples_stay_within_the_cap() {
    let p = RetryPolicy {
        deadline_ms: u32::MAX,
        ..POLICY
    };
    assert_eq!(delay(&p, 0, -1.0), 0);
    assert_eq!(delay(&p, 0, f64::NAN), 0);
    assert_eq!(delay(&p, 0, 1.0), 250);
    assert_eq!(delay(&p, 0, 7.0), 250);
    assert_eq!(delay(&p, 0, f64::INFINITY), 250);
}

#[test]
fn max_retries_gives_up() {
    for n in 0..5 {
        assert!(
            matches!(POLICY.next(n, 0.0, None, 0.5), Next::Retry { .. }),
            "retry {n}"
        );
    }
    assert_eq!(POLICY.next(5, 0.0, None, 0.5), Next::GiveUp);
    assert_eq!(POLICY.next(6, 0.0, None, 0.0), Next::GiveUp);
    let none = RetryPolicy {
        max_retries: 0,
        ..POLICY
    };
    assert_eq!(none.next(0, 0.0, None, 0.0), Next::GiveUp);
    assert_eq!(none.next(0, 0.0, Some(0), 0.0), Next::GiveUp);
}

#[test]
fn deadline_gives_up() {
    // 250 ms cap at n=0: rand 1.0 -> 250 ms.
    assert_eq!(
        POLICY.next(0, 59_000.0, None, 1.0),
        Next::Retry { delay_ms: 250 }
    );
    assert_eq!(
        POLICY.next(0, 59_749.0, None, 1.0),
        Next::Retry { delay_ms: 250 }
    );
    assert_eq!(POLICY.next(0, 59_750.0, None, 1.0), Next::GiveUp);
    assert_eq!(POLICY.next(0, 60_000.0, None, 0.0), Next::GiveUp);
    assert_eq!(POLICY.next(0, 1e12, None, 0.0), Next::GiveUp);
    // A clock that went backwards counts as no time elapsed.
    assert_eq!(POLICY.next(0, -5.0, None, 0.0), Next::Retry { delay_ms: 0 });
}

#[test]
fn retry_after_is_honoured_as_given() {
    assert_eq!(
        POLICY.next(0, 0.0, Some(3000), 0.0),
        Next::Retry { delay_ms: 3000 }
    );
    // Even above max_ms: the server knows best, the deadline still bounds it.
    assert_eq!(
        POLICY.next(0, 0.0, Some(30_000), 0.9),
        Next::Retry { delay_ms: 30_000 }
    );
    assert_eq!(
        POLICY.next(0, 0.0, Some(0), 0.9),
        Next::Retry { delay_ms: 0 }
    );
    assert_eq!(POLICY.next(0, 0.0, Some(60_000), 0.0), Next::GiveUp);
    assert_eq!(POLICY.next(0, 50_000.0, Some(10_000), 0.0), Next::GiveUp);
    assert_eq!(POLICY.next(0, 0.0, Some(u64::MAX), 0.0), Next::GiveUp);
    let long = RetryPolicy {
        deadline_ms: u32::MAX,
        ..POLICY
    };
    assert_eq!(
        long.next(0, 0.0, Some(u32::MAX as u64 + 1), 0.0),
        Next::GiveUp
    );
    assert_eq!(POLICY.next(5, 0.0, Some(1), 0.0), Next::GiveUp);
}
