//! Crash safety: `kill -9` mid-load and a restart on the same file; a request
//! that dies between phases is completed once by a retry after the lock timeout.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::*;

/// Retries until the answer is final (not 409 / no answer), as a client would.
fn settle(addr: std::net::SocketAddr, c: &str, k: &str) -> Resp {
    let t0 = Instant::now();
    loop {
        match try_charge(addr, c, k, BODY) {
            Ok(Some(r)) if r.status != 409 => return r,
            _ => {
                assert!(
                    t0.elapsed() < Duration::from_secs(20),
                    "key {k} never settled"
                );
                thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

/// Starts a server on `db`, and has a charge of `c` with `k` kill it after the
/// provider paid and before phase 3 (the `crash-after-provider` fault).
fn crash_between_phases(db: &Db, flags: &[&str], c: &str, k: &str) {
    let mut s = Server::start_on(db, flags);
    fault(s.addr, c, r#"{"mode":"crash-after-provider"}"#);
    let r = try_charge(s.addr, c, k, BODY).unwrap();
    assert!(r.is_none(), "the process must die before answering: {r:?}");
    let status = s
        .wait_exit(Duration::from_secs(10))
        .expect("the server aborted");
    assert!(!status.success());
}

fn kill_9_mid_load_loses_no_acknowledged_charge_and_doubles_none(b: Backend) {
    let db = Db::new(b);
    let flags = ["--provider-latency-ms", "5", "--lock-timeout", "1s"];
    let mut s = Server::start_on(&db, &flags);
    let c = uid("cust");

    let workers = 8;
    let per_worker = 150;
    let acked: Arc<Mutex<HashMap<String, Resp>>> = Arc::default();
    let unknown: Arc<Mutex<Vec<String>>> = Arc::default();
    let ok_count = Arc::new(AtomicUsize::new(0));
    let dead = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let (acked, unknown, ok_count, dead, c, addr) = (
                acked.clone(),
                unknown.clone(),
                ok_count.clone(),
                dead.clone(),
                c.clone(),
                s.addr,
            );
            thread::spawn(move || {
                for i in 0..per_worker {
                    if dead.load(Ordering::SeqCst) {
                        return;
                    }
                    let k = format!("w{w}-{i}");
                    match try_charge(addr, &c, &k, BODY) {
                        Ok(Some(r)) if r.status == 201 => {
                            acked.lock().unwrap().insert(k, r);
                            ok_count.fetch_add(1, Ordering::SeqCst);
                        }
                        Ok(Some(r)) => {
                            panic!("unexpected {} before the kill: {}", r.status, r.text())
                        }
                        // Killed mid-request: outcome unknown to the client.
                        _ => {
                            unknown.lock().unwrap().push(k);
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    let t0 = Instant::now();
    while ok_count.load(Ordering::SeqCst) < 60 {
        assert!(t0.elapsed() < Duration::from_secs(60), "load too slow");
        thread::sleep(Duration::from_millis(5));
    }
    s.kill9();
    dead.store(true, Ordering::SeqCst);
    for h in handles {
        h.join().unwrap();
    }
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    let unknown = std::mem::take(&mut *unknown.lock().unwrap());
    assert!(
        acked.len() < workers * per_worker,
        "the kill must land mid-load"
    );
    assert!(!acked.is_empty());
    eprintln!(
        "killed with {} acknowledged and {} in flight",
        acked.len(),
        unknown.len()
    );

    let s2 = Server::start_on(&db, &flags);
    // Every acknowledged 201 has its charge, with the id the client was given.
    let l = ledger(s2.addr, &c);
    let by_key: HashMap<String, String> = l["charges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ch| {
            (
                ch["key"].as_str().unwrap().to_string(),
                ch["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        by_key.len(),
        l["count"].as_u64().unwrap() as usize,
        "no key has two charges"
    );
    for (k, r) in &acked {
        assert_eq!(
            by_key.get(k).map(String::as_str),
            r.json()["id"].as_str(),
            "acknowledged charge {k} lost"
        );
    }
    // Replays still answer, byte for byte.
    for (k, r) in &acked {
        let again = charge(s2.addr, &c, k, BODY);
        assert!(again.replayed(), "{k} not replayed");
        assert_eq!(again.body, r.body);
    }
    // Requests whose outcome was unknown complete exactly once on retry
    // (after the lock timeout if they died between phases).
    let mut in_progress_after_restart = 0;
    for k in &unknown {
        if try_charge(s2.addr, &c, k, BODY)
            .ok()
            .flatten()
            .is_some_and(|r| r.status == 409)
        {
            in_progress_after_restart += 1;
        }
        let r = settle(s2.addr, &c, k);
        assert_eq!(r.status, 201, "{k}: {}", r.text());
    }
    eprintln!("{in_progress_after_restart} keys were left in progress by the kill and recovered");
    let l = ledger(s2.addr, &c);
    let keys = charge_keys(&l);
    let distinct: HashSet<&str> = keys.iter().copied().collect();
    assert_eq!(keys.len(), distinct.len(), "no key has two charges");
    assert_eq!(keys.len(), acked.len() + unknown.len());
}

fn a_request_killed_between_phases_completes_once_after_the_lock_timeout(b: Backend) {
    let db = Db::new(b);
    let flags = [
        "--faults",
        "--provider-latency-ms",
        "10",
        "--lock-timeout",
        "3s",
    ];
    let (c, k) = (uid("cust"), uid("key"));
    crash_between_phases(&db, &flags, &c, &k);
    let crashed_at = Instant::now();

    let s2 = Server::start_on(&db, &flags);
    // The provider was paid, the ledger was not written: the key is in progress.
    assert_eq!(provider_counts(s2.addr, &c), (1, 1));
    assert_eq!(ledger(s2.addr, &c)["count"], 0);
    let early = charge(s2.addr, &c, &k, BODY);
    assert!(
        crashed_at.elapsed() < Duration::from_secs(3),
        "restart too slow for this check"
    );
    early.assert_problem(409);

    thread::sleep(
        Duration::from_secs(3).saturating_sub(crashed_at.elapsed()) + Duration::from_millis(200),
    );
    let done = charge(s2.addr, &c, &k, BODY);
    assert_eq!(done.status, 201, "{}", done.text());
    assert!(
        !done.replayed(),
        "the first answer ever produced for this key"
    );
    assert_eq!(
        provider_counts(s2.addr, &c),
        (2, 1),
        "asked again, paid once"
    );
    let l = ledger(s2.addr, &c);
    assert_eq!(l["count"], 1);
    assert_eq!(l["charges"][0]["id"], done.json()["id"]);
    let again = charge(s2.addr, &c, &k, BODY);
    assert!(again.replayed());
    assert_eq!(again.body, done.body);
}

fn a_request_killed_between_phases_is_completed_by_the_server_without_a_retry(b: Backend) {
    // The client never comes back. The provider was paid, so the ledger must
    // get the charge anyway: the reaper completes the operation (a provider
    // lookup, no second payment), and a late retry replays it.
    let db = Db::new(b);
    let flags = [
        "--faults",
        "--provider-latency-ms",
        "10",
        "--lock-timeout",
        "1s",
        "--reaper-interval",
        "200ms",
    ];
    let (c, k) = (uid("cust"), uid("key"));
    crash_between_phases(&db, &flags, &c, &k);

    let s2 = Server::start_on(&db, &flags);
    let t0 = Instant::now();
    let l = loop {
        let l = ledger(s2.addr, &c);
        if l["count"] != 0 {
            break l;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the paid operation never reached the ledger"
        );
        thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(l["count"], 1);
    assert_eq!(l["charges"][0]["key"].as_str(), Some(k.as_str()));
    assert_eq!(
        provider_counts(s2.addr, &c),
        (1, 1),
        "recovery looks the payment up, it never pays again"
    );
    let late = charge(s2.addr, &c, &k, BODY);
    assert_eq!(late.status, 201, "{}", late.text());
    assert!(
        late.replayed(),
        "the server's completion is the stored answer"
    );
    assert_eq!(late.json()["id"], l["charges"][0]["id"]);
    assert_eq!(late.json()["provider_ref"], l["charges"][0]["provider_ref"]);
}

fn a_request_that_died_before_the_provider_leaves_its_key_free_for_the_retry(b: Backend) {
    // Lock stale, provider never called: recovery finds nothing to complete,
    // pays nothing and leaves the key alone, so the client's retry takes it
    // over at once.
    let db = Db::new(b);
    let (c, k) = (uid("cust"), uid("key"));
    // A real request on another key gives the schema and BODY's fingerprint.
    let mut first = Server::start_on(&db, &["--provider-latency-ms", "5"]);
    assert_eq!(charge(first.addr, &c, "probe", BODY).status, 201);
    first.kill9();
    // The row phase 1 leaves when its request dies before phase 2.
    db.sql(&format!(
        "INSERT INTO idempotency_keys (customer, idem_key, fingerprint, reservation, state,
             lock_owner, locked_at, created_at, expires_at)
         SELECT customer, {}, fingerprint, 'op_dead', 'in_progress', 'lk_dead', 1, created_at, expires_at
         FROM idempotency_keys WHERE customer = {} AND idem_key = 'probe'",
        Db::quote(&k),
        Db::quote(&c)
    ));

    let s = Server::start_on(
        &db,
        &[
            "--faults",
            "--provider-latency-ms",
            "5",
            "--reaper-interval",
            "100ms",
        ],
    );
    // Let several recovery passes go over the key.
    thread::sleep(Duration::from_millis(500));
    assert_eq!(ledger(s.addr, &c)["count"], 1, "only the probe");
    assert_eq!(get_json(s.addr, "/api/provider", &c)["calls"], 1);
    let r = charge(s.addr, &c, &k, BODY);
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(!r.replayed());
    assert_eq!(ledger(s.addr, &c)["count"], 2);
    assert_eq!(get_json(s.addr, "/api/provider", &c)["payments"], 2);
}

fn recovery_leaves_a_slow_but_live_request_alone(b: Backend) {
    // The provider call outlasts --lock-timeout and the reaper ticks all
    // through it: with nothing paid yet there is nothing to complete, so the
    // request keeps its lock and gets its own 201 (not a 409).
    let s = Server::start_with(
        b,
        &[
            "--faults",
            "--provider-latency-ms",
            "1500",
            "--lock-timeout",
            "200ms",
            "--reaper-interval",
            "50ms",
        ],
    );
    let (c, k) = (uid("cust"), uid("key"));
    let r = charge(s.addr, &c, &k, BODY);
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(!r.replayed());
    assert_eq!(ledger(s.addr, &c)["count"], 1);
    assert_eq!(get_json(s.addr, "/api/provider", &c)["calls"], 1);
}

fn a_request_killed_between_phases_and_retried_after_the_ttl_is_paid_once(b: Backend) {
    // The client comes back after the key's TTL, to a server restarted after
    // it too: whichever recovers the operation first (the reaper's first tick
    // or the retry), it is the first operation, under its own id, never a new
    // one, and nothing deletes it on the way.
    let db = Db::new(b);
    let flags = [
        "--faults",
        "--provider-latency-ms",
        "10",
        "--lock-timeout",
        "200ms",
        "--key-ttl",
        "2s",
    ];
    let (c, k) = (uid("cust"), uid("key"));
    crash_between_phases(&db, &flags, &c, &k);
    thread::sleep(Duration::from_millis(2_300));

    let s2 = Server::start_on(&db, &flags);
    // A 409 while the reaper holds the operation is retried, as a client does.
    let t0 = Instant::now();
    let retry = loop {
        let r = charge(s2.addr, &c, &k, BODY);
        if r.status != 409 || t0.elapsed() > Duration::from_secs(10) {
            break r;
        }
        thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(retry.status, 201, "{}", retry.text());
    let (_, payments) = provider_counts(s2.addr, &c);
    assert_eq!(payments, 1, "paid once, under the first operation id");
    let l = ledger(s2.addr, &c);
    assert_eq!(l["count"], 1);
    assert_eq!(l["charges"][0]["id"], retry.json()["id"]);
    assert!(charge(s2.addr, &c, &k, BODY).replayed());
}

both_stores!(
    kill_9_mid_load_loses_no_acknowledged_charge_and_doubles_none,
    a_request_killed_between_phases_and_retried_after_the_ttl_is_paid_once,
    a_request_killed_between_phases_completes_once_after_the_lock_timeout,
    a_request_killed_between_phases_is_completed_by_the_server_without_a_retry,
    a_request_that_died_before_the_provider_leaves_its_key_free_for_the_retry,
    recovery_leaves_a_slow_but_live_request_alone,
);
