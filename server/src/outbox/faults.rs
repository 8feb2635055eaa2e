//! Faults of the receipt worker: which delivery goes wrong, and how.
//!
//! The relay asks [`DeliveryFaults::take`] once per delivery attempt. The
//! server answers from the customer's scheduled faults (`--faults`); the
//! worker process from its own `--fault` flags, since it has no API.

use std::sync::atomic::{AtomicU64, Ordering};

use clap::{Args, ValueEnum};

/// What goes wrong with one delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeliveryFault {
    /// The consumer fails before writing the receipt; the event is retried.
    #[value(name = "worker-fail-before-receipt")]
    FailBeforeReceipt,
    /// The worker dies after the receipt committed and before the ack.
    #[value(name = "worker-crash-before-ack")]
    CrashBeforeAck,
}

/// Where the relay gets its faults from.
pub trait DeliveryFaults: Send + Sync + 'static {
    /// The fault for this delivery of `event_id` (of `customer`), if any.
    fn take(&self, customer: &str, event_id: &str) -> Option<DeliveryFault>;
}

/// No faults: production.
#[derive(Debug, Default)]
pub struct NoFaults;

impl DeliveryFaults for NoFaults {
    fn take(&self, _customer: &str, _event_id: &str) -> Option<DeliveryFault> {
        None
    }
}

/// Flags of `idemkey-server worker` that break its deliveries on purpose.
#[derive(Debug, Clone, Args)]
pub struct WorkerFaultArgs {
    /// Test-only: break deliveries (`worker-crash-before-ack` exits the
    /// process hard after a receipt commit and before its ack).
    #[arg(long, value_enum)]
    pub fault: Option<DeliveryFault>,
    /// Deliveries that go through before the fault strikes.
    #[arg(long, default_value_t = 0, requires = "fault")]
    pub fault_after: u64,
    /// Deliveries the fault strikes (then the worker behaves).
    #[arg(long, default_value_t = 1, requires = "fault",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub fault_count: u64,
}

/// The worker process's faults: `after` deliveries pass, then `count` take
/// the fault, whatever their customer.
#[derive(Debug)]
pub struct Countdown {
    fault: DeliveryFault,
    seen: AtomicU64,
    after: u64,
    count: u64,
}

impl Countdown {
    /// The faults the flags ask for; `None` without `--fault`.
    pub fn from_args(a: &WorkerFaultArgs) -> Option<Countdown> {
        a.fault.map(|fault| Countdown {
            fault,
            seen: AtomicU64::new(0),
            after: a.fault_after,
            count: a.fault_count,
        })
    }
}

impl DeliveryFaults for Countdown {
    fn take(&self, _customer: &str, _event_id: &str) -> Option<DeliveryFault> {
        let n = self.seen.fetch_add(1, Ordering::Relaxed);
        (n >= self.after && n - self.after < self.count).then_some(self.fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        f: WorkerFaultArgs,
    }

    fn countdown(args: &[&str]) -> Result<Option<Countdown>, clap::Error> {
        let t = T::try_parse_from(std::iter::once("t").chain(args.iter().copied()))?;
        Ok(Countdown::from_args(&t.f))
    }

    #[test]
    fn countdown_lets_some_pass_then_strikes_count_times() {
        let c = countdown(&[
            "--fault",
            "worker-fail-before-receipt",
            "--fault-after",
            "2",
            "--fault-count",
            "2",
        ])
        .unwrap()
        .unwrap();
        let got: Vec<_> = (0..6).map(|_| c.take("c", "e")).collect();
        let f = Some(DeliveryFault::FailBeforeReceipt);
        assert_eq!(got, [None, None, f, f, None, None]);
        assert!(countdown(&[]).unwrap().is_none());
    }

    #[test]
    fn bad_fault_flags_are_refused() {
        for bad in [
            &["--fault", "crash"][..],
            &["--fault-after", "3"],
            &["--fault", "worker-crash-before-ack", "--fault-count", "0"],
            &["--fault", "worker-crash-before-ack", "--fault-after", "-1"],
        ] {
            assert!(countdown(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
