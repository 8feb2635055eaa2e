//! The receipt worker's flags, shared by the server (its in-process worker)
//! and `idemkey-server worker`.

use std::time::Duration;

use clap::Args;

use crate::cli::parse_duration;
use crate::outbox::config::OutboxConfig;

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

impl OutboxArgs {
    /// The settings, checked against each other.
    pub fn config(&self) -> Result<OutboxConfig, String> {
        OutboxConfig::new(
            self.outbox_claim_timeout,
            self.processed_retention,
            usize::from(self.outbox_batch),
            self.outbox_poll_interval,
            Duration::from_millis(self.mailer_latency_ms),
        )
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
            &[
                "--outbox-claim-timeout",
                "10s",
                "--processed-retention",
                "19s",
            ],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
