//! The receipt worker's settings (the flags that set them are `cli`'s).
//!
//! One rule ties them: a processed id must outlive every redelivery of its
//! event. An event is redelivered only while it is younger than the
//! redelivery window, `--processed-retention` minus `--outbox-claim-timeout`;
//! the consumer refuses an older one and the relay parks it. The margin of
//! one claim timeout covers a consumer transaction that began just inside
//! the window.

use std::time::Duration;

/// First retry delay after a failed delivery; doubles per failure.
const RETRY_BASE: Duration = Duration::from_millis(200);
/// Longest retry delay after failed deliveries.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// The worker's settings, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxConfig {
    /// How long a claim holds before the event is claimed again.
    pub claim_timeout: Duration,
    /// `--processed-retention`.
    pub retention: Duration,
    /// `--outbox-batch`.
    pub batch: usize,
    /// `--outbox-poll-interval`.
    pub poll: Duration,
    /// `--mailer-latency-ms`.
    pub mailer_latency: Duration,
}

impl OutboxConfig {
    /// Settings from their parts, checked against each other: `retention`
    /// at least twice `claim_timeout`.
    pub fn new(
        claim_timeout: Duration,
        retention: Duration,
        batch: usize,
        poll: Duration,
        mailer_latency: Duration,
    ) -> Result<OutboxConfig, String> {
        if retention < claim_timeout * 2 {
            return Err(format!(
                "--processed-retention ({retention:?}) must be at least twice --outbox-claim-timeout ({claim_timeout:?}): \
                 a processed id has to outlive every redelivery of its event"
            ));
        }
        Ok(OutboxConfig {
            claim_timeout,
            retention,
            batch,
            poll,
            mailer_latency,
        })
    }

    /// The redelivery window: events older than this are never delivered.
    pub fn window(&self) -> Duration {
        self.retention - self.claim_timeout
    }

    /// Delay before retrying an event after its `failures`-th failure.
    pub fn retry_delay(&self, failures: i64) -> Duration {
        let doublings = failures.clamp(1, 16) as u32 - 1;
        (RETRY_BASE * 2u32.pow(doublings)).min(RETRY_MAX)
    }

    /// How often processed ids are reaped: a tenth of the retention,
    /// between 100 ms and a minute.
    pub fn reap_period(&self) -> Duration {
        (self.retention / 10).clamp(Duration::from_millis(100), Duration::from_secs(60))
    }

    /// Milliseconds of a duration, as the stores take them.
    pub fn ms(d: Duration) -> i64 {
        i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(claim: u64, retention: u64) -> Result<OutboxConfig, String> {
        let s = Duration::from_secs;
        OutboxConfig::new(
            s(claim),
            s(retention),
            100,
            Duration::from_millis(200),
            Duration::ZERO,
        )
    }

    #[test]
    fn retention_shorter_than_two_claim_timeouts_is_refused() {
        let e = config(10, 19).unwrap_err();
        assert!(e.contains("--processed-retention"), "{e}");
        let c = config(10, 20).unwrap();
        assert_eq!(c.window(), Duration::from_secs(10));
    }

    #[test]
    fn retries_back_off_to_a_cap() {
        let c = config(30, 7 * 86_400).unwrap();
        let d: Vec<u128> = [1, 2, 3, 9, 40]
            .iter()
            .map(|f| c.retry_delay(*f).as_millis())
            .collect();
        assert_eq!(d, [200, 400, 800, 30_000, 30_000]);
        assert_eq!(c.reap_period(), Duration::from_secs(60));
    }
}
