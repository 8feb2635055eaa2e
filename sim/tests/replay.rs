//! The simulator as `cargo test` sees it (debug build, few schedules; `make test-sim` runs
//! the release build over thousands): a seed replays exactly, the shipped machine passes a
//! few hundred schedules, and each mutation's recorded seed fails as recorded.

use idemkey_sim::check::Property;
use idemkey_sim::{mutation_named, run, MUTATIONS};

#[test]
fn a_seed_replays_exactly() {
    for seed in [1, 77, 2653] {
        let a = run(seed, None, true, None);
        let b = run(seed, None, true, None);
        assert_eq!(a.trace, b.trace, "seed {seed}");
        assert!(a.steps > 10, "seed {seed} did almost nothing");
    }
}

/// The seeds sim/regressions.txt lists as known bugs (`SEED fails PROPERTY`).
fn known_bugs() -> Vec<u64> {
    include_str!("../regressions.txt")
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split('#').next()?.split_whitespace().collect();
            (w.get(1) == Some(&"fails")).then(|| w[0].parse().expect("a seed"))
        })
        .collect()
}

#[test]
fn the_machine_as_shipped_passes_a_few_hundred_schedules() {
    let known = known_bugs();
    for seed in (1..=300).filter(|s| !known.contains(s)) {
        let o = run(seed, None, false, None);
        assert!(o.violation.is_none(), "seed {seed}: {:?}", o.violation);
    }
}

/// Each line of sim/mutations.txt: the seed fails under its mutation (with the property
/// named) and passes without it.
#[test]
fn each_mutation_fails_its_recorded_seed() {
    let text = include_str!("../mutations.txt");
    let mut n = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let w: Vec<&str> = line.split_whitespace().collect();
        let m = mutation_named(w[0]).expect("a mutation name");
        let seed: u64 = w[1].parse().expect("a seed");
        let focus = w.get(3).map(|p| Property::named(p).expect("a property"));
        let got = run(seed, Some(m), false, focus).violation.map(|(p, _)| p);
        assert!(got.is_some(), "{} seed {seed} passed", w[0]);
        if focus.is_some() {
            assert_eq!(got, focus, "{} seed {seed}", w[0]);
        }
        assert!(
            run(seed, None, false, None).violation.is_none(),
            "{} seed {seed} fails unmutated",
            w[0]
        );
        n += 1;
    }
    assert_eq!(n, MUTATIONS.len(), "every mutation has its line");
}
