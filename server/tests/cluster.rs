//! Many instances on one PostgreSQL with one provider service: the
//! deduplication holds across instances, through a `kill -9` of one of them
//! and through the database going away and coming back.

mod common;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use common::*;

/// Three instances on `db`, all paying through `p`.
fn three(db: &Db, p: &ProviderProc, extra: &[&str]) -> Vec<Server> {
    (0..3)
        .map(|i| {
            let name = format!("inst-{i}");
            let mut args = vec!["--faults", "--provider-url", &p.url, "--instance", &name];
            args.extend_from_slice(extra);
            Server::start_on(db, &args)
        })
        .collect()
}

/// Retries a charge over `addrs` (next instance each time) until its answer
/// is final, as a client behind a load balancer would; counts the 503s.
fn settle(addrs: &[SocketAddr], start: usize, c: &str, k: &str, unavailable: &AtomicUsize) -> Resp {
    let t0 = Instant::now();
    for i in start.. {
        let addr = addrs[i % addrs.len()];
        match try_charge(addr, c, k, BODY) {
            Ok(Some(r)) if r.status == 503 => {
                assert_eq!(
                    r.header("retry-after"),
                    Some("1"),
                    "a 503 says when to retry: {}",
                    r.text()
                );
                unavailable.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Some(r)) if r.status != 409 => return r,
            _ => {}
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "key {k} never settled"
        );
        thread::sleep(Duration::from_millis(50));
    }
    unreachable!()
}

/// Workers, each charging new keys one after another until stopped, every key
/// settled with [`settle`] (first to the worker's own instance) and answered 201.
struct Load {
    started: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    unavailable: Arc<AtomicUsize>,
    answers: Arc<Mutex<HashMap<String, Resp>>>,
    workers: Vec<JoinHandle<()>>,
}

impl Load {
    /// `n` workers on `addrs` for customer `c`; worker `w` names its keys `w{w}-{i}`.
    fn start(n: usize, addrs: &[SocketAddr], c: &str) -> Load {
        let started = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let unavailable = Arc::new(AtomicUsize::new(0));
        let answers: Arc<Mutex<HashMap<String, Resp>>> = Arc::default();
        let workers = (0..n)
            .map(|w| {
                let (started, stop, unavailable, answers) = (
                    started.clone(),
                    stop.clone(),
                    unavailable.clone(),
                    answers.clone(),
                );
                let (c, addrs) = (c.to_string(), addrs.to_vec());
                thread::spawn(move || {
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let k = format!("w{w}-{i}");
                        started.fetch_add(1, Ordering::Relaxed);
                        let r = settle(&addrs, w, &c, &k, &unavailable);
                        assert_eq!(r.status, 201, "{k}: {}", r.text());
                        answers.lock().unwrap().insert(k, r);
                        i += 1;
                    }
                })
            })
            .collect();
        Load {
            started,
            stop,
            unavailable,
            answers,
            workers,
        }
    }

    /// How many keys the workers have started on.
    fn started(&self) -> usize {
        self.started.load(Ordering::Relaxed)
    }

    /// How many answers were 503 so far.
    fn unavailable(&self) -> usize {
        self.unavailable.load(Ordering::Relaxed)
    }

    /// Stops the workers once their keys are settled: each key's answer, and how
    /// many answers were 503.
    fn stop(self) -> (HashMap<String, Resp>, usize) {
        self.stop.store(true, Ordering::Relaxed);
        for w in self.workers {
            w.join().unwrap();
        }
        let answers = std::mem::take(&mut *self.answers.lock().unwrap());
        (answers, self.unavailable.load(Ordering::Relaxed))
    }
}

/// Polls `cond` every 10 ms until it holds; panics with `what` after `limit`.
fn wait_for(limit: Duration, what: &str, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < limit, "{what}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// Each key of `keys` has exactly one charge, and the provider one payment each.
fn assert_once_each(addr: SocketAddr, c: &str, keys: &HashSet<String>) {
    let l = ledger(addr, c);
    let charged = charge_keys(&l);
    let distinct: HashSet<&str> = charged.iter().copied().collect();
    assert_eq!(charged.len(), distinct.len(), "a key was charged twice");
    assert_eq!(distinct.len(), keys.len(), "a key was never charged");
    assert!(keys.iter().all(|k| distinct.contains(k.as_str())));
    let (_, payments) = provider_counts(addr, c);
    assert_eq!(payments as usize, keys.len(), "one payment per key");
}

#[test]
fn a_hundred_concurrent_requests_with_one_key_over_three_instances_make_one_charge() {
    let db = Db::new(Backend::Postgres);
    let p = ProviderProc::start(300);
    let inst = three(&db, &p, &[]);
    let addrs: Vec<SocketAddr> = inst.iter().map(|s| s.addr).collect();
    let (c, k) = (uid("cust"), uid("key"));
    let barrier = Arc::new(Barrier::new(100));
    let answers: Vec<Resp> = (0..100)
        .map(|i| {
            let (b, c, k, addr) = (barrier.clone(), c.clone(), k.clone(), addrs[i % 3]);
            thread::spawn(move || {
                b.wait();
                charge(addr, &c, &k, BODY)
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    let mut fresh = 0;
    let mut bodies = HashSet::new();
    let mut served_by = HashSet::new();
    for a in &answers {
        served_by.insert(
            a.header("idemkey-instance")
                .expect("instance header")
                .to_string(),
        );
        match a.status {
            201 => {
                fresh += usize::from(!a.replayed());
                bodies.insert(a.body.clone());
            }
            409 => assert_eq!(a.header("retry-after"), Some("1")),
            other => panic!("only 201 or 409, got {other}: {}", a.text()),
        }
    }
    assert_eq!(fresh, 1, "exactly one request did the work");
    assert!(bodies.len() <= 1);
    assert_eq!(served_by.len(), 3, "{served_by:?}");
    // Replays from every instance, byte for byte.
    let mut replays = HashSet::new();
    for (i, s) in inst.iter().enumerate() {
        let r = charge(s.addr, &c, &k, BODY);
        assert!(r.replayed(), "{}", r.text());
        assert_eq!(
            r.header("idemkey-instance"),
            Some(format!("inst-{i}").as_str())
        );
        replays.insert(r.body);
    }
    assert_eq!(replays.len(), 1);
    if let Some(b) = bodies.iter().next() {
        assert!(replays.contains(b));
    }
    assert_eq!(ledger(addrs[0], &c)["count"], 1);
    assert_eq!(provider_counts(addrs[1], &c), (1, 1));
}

#[test]
fn the_same_key_with_another_payload_on_another_instance_is_422() {
    let db = Db::new(Backend::Postgres);
    let p = ProviderProc::start(5);
    let inst = three(&db, &p, &[]);
    let (c, k) = (uid("cust"), uid("key"));
    assert_eq!(charge(inst[0].addr, &c, &k, BODY).status, 201);
    let other = charge(inst[1].addr, &c, &k, r#"{"amount":1,"currency":"usd"}"#);
    other.assert_problem(422);
    assert_eq!(other.header("idemkey-instance"), Some("inst-1"));
    assert!(charge(inst[2].addr, &c, &k, BODY).replayed());
    assert_eq!(ledger(inst[2].addr, &c)["count"], 1);
}

#[test]
fn a_thousand_distinct_keys_over_three_instances_make_a_thousand_charges() {
    let db = Db::new(Backend::Postgres);
    let p = ProviderProc::start(2);
    let inst = three(&db, &p, &[]);
    let addrs: Vec<SocketAddr> = inst.iter().map(|s| s.addr).collect();
    let c = uid("cust");
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let (next, c, addrs) = (next.clone(), c.clone(), addrs.clone());
            thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= 1000 {
                    return;
                }
                let r = charge(addrs[i % 3], &c, &format!("k-{i}"), BODY);
                assert_eq!(r.status, 201, "k-{i}: {}", r.text());
                assert!(!r.replayed());
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let keys: HashSet<String> = (0..1000).map(|i| format!("k-{i}")).collect();
    assert_once_each(addrs[2], &c, &keys);
}

#[test]
fn kill_9_of_one_instance_mid_load_leaves_one_charge_and_one_payment_per_key() {
    let db = Db::new(Backend::Postgres);
    let p = ProviderProc::start(50);
    let extra = ["--lock-timeout", "1s", "--reaper-interval", "200ms"];
    let mut inst = three(&db, &p, &extra);
    let addrs: Vec<SocketAddr> = inst.iter().map(|s| s.addr).collect();
    let c = uid("cust");
    // The first try of a key goes to its worker's instance; retries move on.
    let load = Load::start(9, &addrs, &c);
    wait_for(Duration::from_secs(60), "load too slow", || {
        load.started() >= 60
    });
    inst[0].kill9();
    thread::sleep(Duration::from_millis(1500));
    let keys: HashSet<String> = load.stop().0.into_keys().collect();
    eprintln!("{} keys, instance 0 killed mid-load", keys.len());
    assert_once_each(addrs[1], &c, &keys);
    // The killed instance restarts cleanly and replays what the others did.
    let back = Server::start_on(
        &db,
        &["--faults", "--provider-url", &p.url, "--instance", "inst-0"],
    );
    let l = ledger(back.addr, &c);
    assert_eq!(l["count"].as_u64(), Some(keys.len() as u64));
    for k in keys.iter().take(20) {
        assert!(charge(back.addr, &c, k, BODY).replayed(), "{k}");
    }
}

#[test]
fn the_database_stopped_and_started_under_load_gives_503s_then_recovers() {
    // Its own PostgreSQL: stopping the shared one would break the other tests.
    let pg = pg::Pg::start_private();
    let db = Db::on(&pg);
    let p = ProviderProc::start(20);
    let inst = three(
        &db,
        &p,
        &["--lock-timeout", "1s", "--reaper-interval", "200ms"],
    );
    let addrs: Vec<SocketAddr> = inst.iter().map(|s| s.addr).collect();
    let c = uid("cust");
    let load = Load::start(6, &addrs, &c);
    wait_for(Duration::from_secs(60), "load too slow", || {
        load.started() >= 30
    });
    pg.stop();
    let why = "no 503 while the database was down";
    wait_for(Duration::from_secs(30), why, || load.unavailable() >= 10);
    // Answers come quickly while it is down: 503s, not hangs.
    let t = Instant::now();
    let r = try_charge(addrs[0], &c, "probe-while-down", BODY)
        .unwrap()
        .expect("an answer");
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    pg.restart();
    let back = load.started();
    let why = "no recovery after the database came back";
    wait_for(Duration::from_secs(60), why, || load.started() >= back + 30);
    let (answers, unavailable) = load.stop();
    let outcomes: HashMap<String, String> = answers
        .into_iter()
        .map(|(k, r)| (k, r.json()["id"].as_str().unwrap().to_string()))
        .collect();
    eprintln!(
        "{} keys, {unavailable} answers 503 while the database was down",
        outcomes.len()
    );
    let mut keys: HashSet<String> = outcomes.keys().cloned().collect();
    // The probe's outcome is unknown to its client; settle it like any other.
    let probe = settle(&addrs, 0, &c, "probe-while-down", &AtomicUsize::new(0));
    assert_eq!(probe.status, 201);
    keys.insert("probe-while-down".into());
    assert_once_each(addrs[2], &c, &keys);
    // Every acknowledged charge is the one in the ledger.
    let l = ledger(addrs[0], &c);
    let ids: HashMap<&str, &str> = l["charges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ch| (ch["key"].as_str().unwrap(), ch["id"].as_str().unwrap()))
        .collect();
    for (k, id) in &outcomes {
        assert_eq!(ids.get(k.as_str()), Some(&id.as_str()), "{k}");
    }
}
