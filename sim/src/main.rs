//! The simulator's command line.
//!
//! ```text
//! idemkey-sim [--seeds N] [--from S]       run N schedules from seed S (default 10000 from 1)
//! idemkey-sim --seed S [--mutation M]      replay one schedule with its trace
//! [--property P]                           (any mode) only property P counts
//! --keep-going                             list every failing seed of the N, no traces
//! idemkey-sim --regressions FILE           replay the seeds listed first (see the file)
//! idemkey-sim --mutations FILE [--seeds N] each mutation: its recorded seed fails, and a
//!                                          search from seed 1 finds a failure within N
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Instant;

use idemkey_sim::check::Property;
use idemkey_sim::world::Stats;
use idemkey_sim::{mutation_named, run, waiver, Mutation, MUTATIONS};

/// What the command line can get wrong.
#[derive(Debug, thiserror::Error)]
enum SimError {
    #[error("{0} needs a number")]
    Number(String),
    #[error("unknown argument {0}")]
    Argument(String),
    #[error("unknown mutation {0} (one of {names})", names = mutation_names())]
    Mutation(String),
    #[error("unknown property {0}")]
    Property(String),
    #[error("cannot read {0}: {1}")]
    File(String, std::io::Error),
    #[error("{0}:{1}: {2}")]
    Line(String, usize, String),
}

#[derive(Default)]
struct Args {
    seeds: Option<u64>,
    from: Option<u64>,
    seed: Option<u64>,
    mutation: Option<Mutation>,
    focus: Option<Property>,
    regressions: Option<String>,
    mutations: Option<String>,
    keep_going: bool,
}

fn parse() -> Result<Args, SimError> {
    let mut a = Args::default();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut num = |name: &str| -> Result<u64, SimError> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| SimError::Number(name.into()))
        };
        match arg.as_str() {
            "--seeds" => a.seeds = Some(num("--seeds")?),
            "--from" => a.from = Some(num("--from")?),
            "--seed" => a.seed = Some(num("--seed")?),
            "--mutation" => {
                let m = it.next().unwrap_or_default();
                a.mutation = Some(mutation_named(&m).ok_or(SimError::Mutation(m))?);
            }
            "--property" => {
                let p = it.next().unwrap_or_default();
                a.focus = Some(Property::named(&p).ok_or(SimError::Property(p))?);
            }
            "--regressions" => a.regressions = it.next(),
            "--mutations" => a.mutations = it.next(),
            "--keep-going" => a.keep_going = true,
            _ => return Err(SimError::Argument(arg)),
        }
    }
    Ok(a)
}

/// The mutations' names, for the error that lists them.
fn mutation_names() -> String {
    let names: Vec<&str> = MUTATIONS.iter().map(|(n, _)| *n).collect();
    names.join(", ")
}

fn name_of(m: Option<Mutation>) -> &'static str {
    MUTATIONS
        .iter()
        .find(|(_, x)| Some(*x) == m)
        .map_or("none", |(n, _)| n)
}

/// Prints the failure of `seed` with its trace.
fn report(seed: u64, m: Option<Mutation>, focus: Option<Property>) {
    let o = run(seed, m, true, focus);
    for line in &o.trace {
        println!("  {line}");
    }
    if let Some((p, msg)) = o.violation {
        println!(
            "FAILED seed {seed} (mutation {}): {} [{}]: {msg}",
            name_of(m),
            p.name(),
            p.promise()
        );
    }
    let mut flag = m
        .map(|_| format!(" MUTATION={}", name_of(m)))
        .unwrap_or_default();
    if let Some(p) = focus {
        flag.push_str(&format!(" PROPERTY={}", p.name()));
    }
    println!("replay: make sim SEED={seed}{flag}");
}

/// Runs `n` schedules from `from` but the seeds in `skip` (known bugs, replayed from the
/// regression list); the first failing seed and how many ran.
fn search(
    from: u64,
    n: u64,
    m: Option<Mutation>,
    focus: Option<Property>,
    skip: &[u64],
    sum: &mut Stats,
) -> (Option<u64>, u64, u64) {
    let mut steps = 0;
    for i in 0..n {
        if skip.contains(&(from + i)) {
            continue;
        }
        let o = run(from + i, m, false, focus);
        steps += o.steps;
        add(sum, &o.stats);
        if o.violation.is_some() {
            return (Some(from + i), i + 1, steps);
        }
    }
    (None, n, steps)
}

/// Adds a run's figures to `sum`.
fn add(sum: &mut Stats, s: &Stats) {
    sum.tries += s.tries;
    sum.charges += s.charges;
    sum.replays += s.replays;
    sum.unknown += s.unknown;
    sum.key_changed += s.key_changed;
    sum.deaths += s.deaths;
    sum.overlaps += s.overlaps;
    sum.refused += s.refused;
    for (a, b) in sum.waived.iter_mut().zip(s.waived) {
        *a += b;
    }
}

/// The waivers a search met, each with how often and the sentence of the docs it quotes.
fn print_waived(sum: &Stats) {
    for w in waiver::ALL {
        let (file, quote) = w.doc();
        println!(
            "  waived {:>6}x {} ({file}: \"{quote}\")",
            sum.waived[w.index()],
            w.name()
        );
    }
}

fn lines(path: &str) -> Result<Vec<(usize, Vec<String>)>, SimError> {
    let text = std::fs::read_to_string(path).map_err(|e| SimError::File(path.into(), e))?;
    Ok(text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            (
                i + 1,
                l.split('#')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .map(String::from)
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, w)| !w.is_empty())
        .collect())
}

/// The regression list: `SEED pass`, or `SEED fails PROPERTY` for a known bug not fixed
/// yet (the run must still fail so; flip it to `pass` once fixed).
fn regressions(path: &str, known: &mut Vec<u64>) -> Result<bool, SimError> {
    let mut ok = true;
    let mut n = 0;
    for (no, w) in lines(path)? {
        let bad = || {
            SimError::Line(
                path.into(),
                no,
                "expected: SEED pass | SEED fails PROPERTY".into(),
            )
        };
        let seed: u64 = w[0].parse().map_err(|_| bad())?;
        let want = match (w.get(1).map(String::as_str), w.get(2)) {
            (Some("pass"), None) => None,
            (Some("fails"), Some(p)) => Some(p.clone()),
            _ => return Err(bad()),
        };
        if want.is_some() {
            known.push(seed);
        }
        let got = run(seed, None, false, None)
            .violation
            .map(|(p, _)| p.name().to_string());
        n += 1;
        if got != want {
            ok = false;
            println!("regression seed {seed}: expected {want:?}, got {got:?}");
            report(seed, None, None);
        }
    }
    println!("regressions: {n} seeds replayed from {path}");
    Ok(ok)
}

/// The mutation list: `NAME SEED SCHEDULES [PROPERTY]`: the recorded seed fails under the
/// mutation (PROPERTY, if given, is the one it must break) and passes without it, and a
/// search from seed 1 catches it within `budget` schedules, or the SCHEDULES it took when
/// recorded if more.
fn mutations(path: &str, budget: u64) -> Result<bool, SimError> {
    let mut ok = true;
    let mut seen = Vec::new();
    for (no, w) in lines(path)? {
        let bad = || {
            SimError::Line(
                path.into(),
                no,
                "expected: MUTATION SEED SCHEDULES [PROPERTY]".into(),
            )
        };
        let m = mutation_named(&w[0]).ok_or_else(bad)?;
        let seed: u64 = w.get(1).and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        // The search may take as many schedules as it took when recorded, if more.
        let recorded: u64 = w.get(2).and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let focus = match w.get(3) {
            Some(p) => Some(Property::named(p).ok_or_else(bad)?),
            None => None,
        };
        seen.push(m);
        let fails = run(seed, Some(m), false, focus).violation;
        let clean = run(seed, None, false, None).violation;
        let t = Instant::now();
        let limit = budget.max(recorded);
        let (found, count, _) = search(1, limit, Some(m), focus, &[], &mut Stats::default());
        let (fname, fmsg) = fails
            .as_ref()
            .map_or(("passed", String::new()), |(p, s)| (p.name(), s.clone()));
        println!(
            "mutation {}: recorded seed {seed}: {fname} {fmsg}; search from seed 1: {} after {count} schedules ({:.1} s)",
            w[0],
            found.map_or("NOT CAUGHT".into(), |s| format!("caught by seed {s}")),
            t.elapsed().as_secs_f64()
        );
        if fails.is_none() || clean.is_some() || found.is_none() {
            ok = false;
        }
    }
    for (name, m) in MUTATIONS {
        if !seen.contains(&m) {
            println!("mutation {name}: not in {path}");
            ok = false;
        }
    }
    Ok(ok)
}

fn main() -> ExitCode {
    match main_() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("idemkey-sim: {e}");
            ExitCode::from(2)
        }
    }
}

fn main_() -> Result<bool, SimError> {
    let a = parse()?;
    if let Some(seed) = a.seed {
        let o = run(seed, a.mutation, true, a.focus);
        if o.violation.is_some() {
            report(seed, a.mutation, a.focus);
            return Ok(false);
        }
        for line in &o.trace {
            println!("  {line}");
        }
        println!(
            "seed {seed} (mutation {}): passed, {} events",
            name_of(a.mutation),
            o.steps
        );
        return Ok(true);
    }
    let budget = a.seeds.unwrap_or(10_000);
    if let Some(path) = &a.mutations {
        return mutations(path, budget);
    }
    let mut known = Vec::new();
    if let Some(path) = &a.regressions {
        if !regressions(path, &mut known)? {
            return Ok(false);
        }
    }
    let from = a.from.unwrap_or(1);
    if a.keep_going {
        let mut failed = 0;
        let mut sum = Stats::default();
        for seed in (from..from + budget).filter(|s| !known.contains(s)) {
            let o = run(seed, a.mutation, false, a.focus);
            add(&mut sum, &o.stats);
            if let Some((p, msg)) = o.violation {
                failed += 1;
                println!("seed {seed}: {} [{}]: {msg}", p.name(), p.promise());
            }
        }
        println!("{failed} of {budget} schedules failed (known bugs skipped)");
        print_waived(&sum);
        return Ok(failed == 0);
    }
    let t = Instant::now();
    let mut sum = Stats::default();
    let (found, count, steps) = search(from, budget, a.mutation, a.focus, &known, &mut sum);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{count} schedules from seed {from} (mutation {}) in {secs:.1} s: {:.0} schedules/s, {:.0} events each",
        name_of(a.mutation),
        count as f64 / secs,
        steps as f64 / count as f64
    );
    println!("  they went through: {sum:?}");
    print_waived(&sum);
    if let Some(seed) = found {
        report(seed, a.mutation, a.focus);
        return Ok(false);
    }
    Ok(true)
}
