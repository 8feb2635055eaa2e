//! The receipt worker's settings, as flags shared by the server (its
//! in-process worker) and `idemkey-server worker`.
//!
//! One rule ties them: a processed id must outlive every redelivery of its
//! event. An event is redelivered only while it is younger than the
//! redelivery window, `--processed-retention` minus `--outbox-claim-timeout`;
//! the consumer refuses an older one and the relay parks it. The margin of
//! one claim timeout covers a consumer transaction that began just inside
//! the window.

use std::time::Duration;

use clap::Args;

use crate::cli::parse_duration;

/// First retry delay after a failed delivery; doubles per failure.
const RETRY_BASE: Duration = Duration::from_millis(200);
/// Longest retry delay after failed deliveries.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// Flags of the receipt worker.
#[derive(Debug, Clone, Args)]
pub struct OutboxArgs {
    /// Age after which an event claimed but not acknowledged (its worker
    /// died) is claimed again, on the database's clock.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub outbox_claim_timeout: Duration,

    /// How long the consumer keeps the ids of processed events; at least
    /// twice the claim timeout. Events are delivered only while younger
    /// than this minus the claim timeout.
    #[arg(long, default_value = "7d", value_parser = parse_duration)]
    pub processed_retention: Duration,

    /// Most events one worker claims at a time (1 to 1000).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub outbox_batch: u16,

    /// How often an idle worker looks for new events.
    #[arg(long, default_value = "200ms", value_parser = parse_duration)]
    pub outbox_poll_interval: Duration,

    /// Simulated time the mailer stand-in takes per receipt, in milliseconds.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub mailer_latency_ms: u64,
}

/// The worker's settings, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxConfig {
    /// `--outbox-claim-timeout`.
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

impl OutboxArgs {
    /// Checks the flags against each other.
    pub fn config(&self) -> Result<OutboxConfig, String> {
        if self.processed_retention < self.outbox_claim_timeout * 2 {
            return Err(format!(
                "--processed-retention ({:?}) must be at least twice --outbox-claim-timeout ({:?}): \
                 a processed id has to outlive every redelivery of its event",
                self.processed_retention, self.outbox_claim_timeout
            ));
        }
        Ok(OutboxConfig {
            claim_timeout: self.outbox_claim_timeout,
            retention: self.processed_retention,
            batch: usize::from(self.outbox_batch),
            poll: self.outbox_poll_interval,
            mailer_latency: Duration::from_millis(self.mailer_latency_ms),
        })
    }
}

impl OutboxConfig {
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
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: OutboxArgs,
    }

    fn parse(args: &[&str]) -> Result<OutboxConfig, String> {
        let t = T::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        t.a.config()
    }

    #[test]
    fn defaults_keep_ids_a_week_and_reclaim_after_30s() {
        let c = parse(&[]).unwrap();
        assert_eq!(c.claim_timeout, Duration::from_secs(30));
        assert_eq!(c.retention, Duration::from_secs(7 * 86_400));
        assert_eq!(c.window(), Duration::from_secs(7 * 86_400 - 30));
        assert_eq!(
            (c.batch, c.poll, c.mailer_latency),
            (100, Duration::from_millis(200), Duration::ZERO)
        );
        assert_eq!(c.reap_period(), Duration::from_secs(60));
    }

    #[test]
    fn retention_shorter_than_two_claim_timeouts_is_refused() {
        let e = parse(&[
            "--outbox-claim-timeout",
            "10s",
            "--processed-retention",
            "19s",
        ])
        .unwrap_err();
        assert!(e.contains("--processed-retention"), "{e}");
        let c = parse(&[
            "--outbox-claim-timeout",
            "10s",
            "--processed-retention",
            "20s",
        ])
        .unwrap();
        assert_eq!(c.window(), Duration::from_secs(10));
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in [
            &["--outbox-batch", "0"][..],
            &["--outbox-batch", "1001"],
            &["--outbox-batch", "x"],
            &["--outbox-claim-timeout", "0"],
            &["--processed-retention", "-1s"],
            &["--outbox-poll-interval", "soon"],
            &["--mailer-latency-ms", "60001"],
            &["--mailer-latency-ms", "-1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn retries_back_off_to_a_cap() {
        let c = parse(&[]).unwrap();
        let d: Vec<u128> = [1, 2, 3, 9, 40]
            .iter()
            .map(|f| c.retry_delay(*f).as_millis())
            .collect();
        assert_eq!(d, [200, 400, 800, 30_000, 30_000]);
    }
}
