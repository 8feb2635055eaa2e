//! idemkey-sim: a deterministic simulation of idemkey's client machine
//! (`idemkey::core::machine`). Several pages of a user's tabs each run the scope's machine
//! against models of what the browser gives (localStorage that other tabs see late, with
//! `storage` events delayed, reordered or missing; IndexedDB transactions that commit, abort
//! or lose their connection; Web Locks, or a tab of its own without them; a
//! BroadcastChannel with delay and loss), a network that loses, delays and times out tries,
//! and a server that keeps keys as the reference server does (or forgets them), all driven
//! by one seeded queue. Properties from the README's promises are checked during and after
//! every run ([`check::Property`]); a seed replays its run exactly, with a trace.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bystander;
pub mod check;
pub mod clock;
mod dispatch;
pub mod ends;
pub mod env;
mod flight;
mod idb;
pub mod ids;
mod lanes;
mod local;
mod locks;
mod moves;
mod net;
mod page;
pub mod property;
pub mod queue;
pub mod refusals;
pub mod rng;
mod server;
mod spans;
mod stuck;
mod time;
mod txn;
pub mod user;
pub mod waiver;
pub mod world;

pub use idemkey::core::machine::{set_mutation, Mutation};

use property::Property;

/// What one run found.
pub struct Outcome {
    /// The first violation, if any.
    pub violation: Option<(Property, String)>,
    /// Events the run handled.
    pub steps: u64,
    /// The run's trace, when asked for.
    pub trace: Vec<String>,
    /// What the run went through.
    pub stats: world::Stats,
}

/// Runs the schedule of `seed` with `mutation` on (`None`: the machine as shipped);
/// with `focus`, only that property counts.
pub fn run(
    seed: u64,
    mutation: Option<Mutation>,
    traced: bool,
    focus: Option<Property>,
) -> Outcome {
    set_mutation(mutation);
    let mut w = world::World::new(seed, traced, focus);
    let violation = w.run();
    set_mutation(None);
    w.stats.waived = w.check.waived;
    w.stats.refused = w.env.borrow().refused;
    Outcome {
        violation,
        steps: w.steps,
        stats: w.stats,
        trace: w.trace.take().unwrap_or_default(),
    }
}

/// A mutation by its name on the command line.
pub fn mutation_named(name: &str) -> Option<Mutation> {
    MUTATIONS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

/// Every mutation, with its name.
pub const MUTATIONS: [(&str, Mutation); 14] = [
    ("open-writes-own-key", Mutation::OpenWritesOwnKey),
    ("rotate-after-unknown", Mutation::RotateAfterUnknown),
    ("skip-reread", Mutation::SkipReRead),
    ("finish-no-mark", Mutation::FinishNoMark),
    ("order-at-lock", Mutation::HeardAtLock),
    ("drop-ended-answer", Mutation::DropEndedAnswer),
    ("shown-replaced", Mutation::ShownReplaced),
    ("end-without-flag", Mutation::EndWithoutFlag),
    ("committed-unchecked", Mutation::CommittedUnchecked),
    ("flag-not-restored", Mutation::FlagNotRestored),
    ("sweep-ignores-marks", Mutation::SweepIgnoresMarks),
    ("failed-read-skips-copy", Mutation::FailedReadSkipsCopy),
    ("resume-gives-up", Mutation::ResumeGivesUp),
    ("shown-mark-unread", Mutation::ShownMarkUnread),
];
