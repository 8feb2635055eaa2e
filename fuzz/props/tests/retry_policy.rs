//! Property tests of the retry policy (`RetryPolicy::next`, `cap_ms`), alone and over a
//! whole submit as the browser glue runs it: delays stay within the backoff bounds or are
//! the server's `Retry-After`, and no try or wait ever reaches past the deadline.

use idemkey::core::retry::{Next, RetryPolicy};
use proptest::prelude::*;

/// Any policy `Checkout.open` accepts (backoff.baseMs <= backoff.maxMs).
fn policy() -> impl Strategy<Value = RetryPolicy> {
    (
        0u32..=100,
        0u32..=3_600_000,
        0u32..=3_600_000,
        1u32..=86_400_000,
    )
        .prop_map(|(max_retries, a, b, deadline_ms)| RetryPolicy {
            max_retries,
            base_ms: a.min(b),
            max_ms: a.max(b),
            deadline_ms,
        })
}

/// A `Retry-After` as the glue passes it on: none, or a wait in ms of any size.
fn retry_after() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        2 => Just(None),
        1 => (0u64..120_000).prop_map(Some),
        1 => any::<u64>().prop_map(Some),
    ]
}

/// A random sample as `Math.random()` gives it, plus the values it never should.
fn rand01() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0f64..1.0,
        1 => prop::sample::select(vec![0.0, 0.999_999_999, 1.0, -1.0, 2.0, f64::NAN, f64::INFINITY]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1_000, ..ProptestConfig::default() })]

    #[test]
    fn one_decision_stays_within_its_bounds(
        p in policy(),
        retries in 0u32..=110,
        elapsed in prop_oneof![0.0f64..90_000_000.0, Just(-5.0), Just(f64::NAN)],
        ra in retry_after(),
        r in rand01(),
    ) {
        let cap = p.cap_ms(retries);
        prop_assert!(cap <= p.max_ms);
        prop_assert!(cap <= p.cap_ms(retries + 1) || p.base_ms == 0, "the cap never shrinks");
        match p.next(retries, elapsed, ra, r) {
            Next::GiveUp => {}
            Next::Retry { delay_ms } => {
                prop_assert!(retries < p.max_retries, "retried past maxRetries");
                match ra {
                    Some(ms) => prop_assert_eq!(delay_ms as u64, ms, "Retry-After is honoured as given"),
                    None => prop_assert!(delay_ms <= cap, "{} over the cap {}", delay_ms, cap),
                }
                let from = if elapsed > 0.0 { elapsed } else { 0.0 };
                prop_assert!(from + (delay_ms as f64) < p.deadline_ms as f64, "the wait reaches the deadline");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_whole_submit_never_passes_its_deadline(
        p in policy(),
        timeout_ms in 1u32..=600_000,
        tries in prop::collection::vec((0u32..=700_000, retry_after(), rand01()), 1..40),
    ) {
        // Integer ms, as the clock advances: each try takes its duration or is cut at its
        // timeout, min(timeoutMs, time left to the deadline) (at least 1 ms).
        let mut elapsed: u64 = 0;
        let mut sent = 0u32;
        for (retries, (took, ra, r)) in tries.iter().enumerate() {
            let left = (p.deadline_ms as u64).saturating_sub(elapsed);
            prop_assert!(left >= 1, "a try started at or after the deadline");
            let timeout = (timeout_ms as u64).min(left).max(1);
            elapsed += (*took as u64).min(timeout);
            sent += 1;
            prop_assert!(elapsed <= p.deadline_ms as u64, "a try ran past the deadline");
            match p.next(retries as u32, elapsed as f64, *ra, *r) {
                Next::GiveUp => break,
                Next::Retry { delay_ms } => elapsed += delay_ms as u64,
            }
            prop_assert!(elapsed < p.deadline_ms as u64, "a wait ended at or past the deadline");
        }
        prop_assert!(sent <= p.max_retries + 1, "{} tries for maxRetries {}", sent, p.max_retries);
    }
}
