//! The receipt worker as its own process (`idemkey-server worker`) on SQLite:
//! a hard exit before the ack, `kill -9` mid-batch, and three workers sharing
//! one database, each ending with exactly one receipt per charge.

mod common;
mod outbox_support;

both_stores!(
    without_a_worker_events_wait_in_the_outbox,
    a_worker_that_exits_hard_before_its_ack_is_redelivered_by_the_next_one,
    kill_9_of_a_worker_mid_batch_is_reclaimed_after_the_timeout_with_one_receipt_each,
    three_workers_on_one_database_1000_charges_1000_receipts,
);

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use outbox_support::*;

/// A server that leaves delivery to worker processes.
fn server(b: Backend) -> Server {
    Server::start_with(
        b,
        &[
            "--faults",
            "--no-receipt-worker",
            "--provider-latency-ms",
            "0",
        ],
    )
}

/// `n` charges of `customer` with distinct keys, over `threads` connections.
fn charges(addr: std::net::SocketAddr, customer: &str, n: usize, threads: usize) {
    let customer = Arc::new(customer.to_string());
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let customer = customer.clone();
            thread::spawn(move || {
                for i in (t..n).step_by(threads) {
                    let r = charge(addr, &customer, &format!("k{i}"), BODY);
                    assert_eq!(r.status, 201, "{}", r.text());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

fn assert_one_receipt_each(view: &serde_json::Value, n: usize) {
    let per = receipts_per_charge(view);
    assert_eq!(per.len(), n, "every charge has a receipt");
    let doubled: Vec<_> = per.iter().filter(|(_, k)| **k != 1).collect();
    assert!(
        doubled.is_empty(),
        "charges with more than one receipt: {doubled:?}"
    );
    assert_eq!(view["count"], n);
}

fn without_a_worker_events_wait_in_the_outbox(b: Backend) {
    let s = server(b);
    let c = uid("cust");
    charges(s.addr, &c, 3, 1);
    thread::sleep(Duration::from_millis(500));
    let view = receipts(s.addr, &c);
    assert_eq!(view["count"], 0);
    assert!(view["events"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["state"] == "pending" && e["deliveries"] == 0));
    let _w = WorkerProc::start(s.db(), &["--outbox-poll-interval", "50ms"]);
    assert_one_receipt_each(&settled(s.addr, &c, 3, Duration::from_secs(10)), 3);
}

fn a_worker_that_exits_hard_before_its_ack_is_redelivered_by_the_next_one(b: Backend) {
    let s = server(b);
    let c = uid("cust");
    charges(s.addr, &c, 5, 1);
    let flags = [
        "--outbox-claim-timeout",
        "1s",
        "--outbox-poll-interval",
        "50ms",
    ];
    let mut dying = WorkerProc::start(
        s.db(),
        &[&flags[..], &["--fault", "worker-crash-before-ack"]].concat(),
    );
    let status = dying
        .wait_exit(Duration::from_secs(10))
        .expect("the worker exits by itself");
    assert!(!status.success(), "a hard exit: {status:?}");
    let view = receipts(s.addr, &c);
    assert_eq!(view["count"], 5, "its batch's receipts committed");
    assert!(
        view["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["state"] == "pending"),
        "and none was acked"
    );
    assert!(
        dying.log_text().contains("exiting hard"),
        "{}",
        dying.log_text()
    );

    let t0 = Instant::now();
    let _next = WorkerProc::start(s.db(), &flags);
    let view = settled(s.addr, &c, 5, Duration::from_secs(15));
    assert!(
        t0.elapsed() >= Duration::from_millis(500),
        "not before the dead worker's claims went stale"
    );
    assert_one_receipt_each(&view, 5);
    for e in view["events"].as_array().unwrap() {
        assert_eq!(
            (e["deliveries"].as_i64(), e["duplicates_skipped"].as_i64()),
            (Some(2), Some(1)),
            "{e}"
        );
    }
}

fn kill_9_of_a_worker_mid_batch_is_reclaimed_after_the_timeout_with_one_receipt_each(b: Backend) {
    let s = server(b);
    let c = uid("cust");
    let n = 200;
    charges(s.addr, &c, n, 4);
    let flags = [
        "--outbox-claim-timeout",
        "2s",
        "--outbox-batch",
        "20",
        "--mailer-latency-ms",
        "10",
        "--outbox-poll-interval",
        "50ms",
    ];
    let mut first = WorkerProc::start(s.db(), &flags);
    // Kill it while it holds a claimed batch: the mailer takes 200 ms per
    // batch of 20, so the kill lands inside one.
    let claimed = format!(
        "SELECT COUNT(*) FROM outbox_events WHERE claimed_by = '{}' AND delivered_at IS NULL",
        first.id
    );
    wait_for(
        "some batches delivered and one claimed",
        Duration::from_secs(30),
        || {
            (receipts(s.addr, &c)["count"].as_u64().unwrap() >= 40 && count(s.db(), &claimed) > 0)
                .then_some(())
        },
    );
    first.kill9();
    let stranded: Vec<(String, i64)> = s
        .db()
        .sql(&format!(
            "SELECT string_agg(id || ' ' || claimed_at, ',') FROM outbox_events
             WHERE claimed_by = '{}' AND delivered_at IS NULL",
            first.id
        ))
        .unwrap_or_default()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (id, at) = p.split_once(' ').expect("id and time");
            (id.to_string(), at.parse().expect("claimed_at"))
        })
        .collect();
    assert!(!stranded.is_empty(), "the kill left a claimed batch behind");
    let delivered_before = receipts(s.addr, &c)["count"].as_u64().unwrap() as usize;
    assert!(delivered_before < n, "killed mid-run");

    let _second = WorkerProc::start(s.db(), &flags);
    let view = settled(s.addr, &c, n, Duration::from_secs(60));
    assert_one_receipt_each(&view, n);
    for (id, claimed_at) in &stranded {
        let row = |col: &str| {
            count(
                s.db(),
                &format!("SELECT {col} FROM outbox_events WHERE id = '{id}'"),
            )
        };
        let (attempts, delivered_at) = (row("attempts"), row("delivered_at"));
        assert_eq!(attempts, 2, "{id}: claimed again once");
        assert!(
            delivered_at >= claimed_at + 2_000,
            "{id}: reclaimed only after the claim timeout ({claimed_at} -> {delivered_at})"
        );
    }
    eprintln!(
        "killed with {delivered_before} of {n} receipts sent and {} events claimed",
        stranded.len()
    );
}

fn three_workers_on_one_database_1000_charges_1000_receipts(b: Backend) {
    let s = server(b);
    let c = uid("cust");
    let flags = ["--outbox-batch", "25", "--outbox-poll-interval", "20ms"];
    let workers: Vec<WorkerProc> = (0..3).map(|_| WorkerProc::start(s.db(), &flags)).collect();
    charges(s.addr, &c, 1_000, 8);
    let view = settled(s.addr, &c, 1_000, Duration::from_secs(120));
    assert_one_receipt_each(&view, 1_000);
    assert!(
        view["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["deliveries"] == 1),
        "no event delivered twice"
    );
    let by_worker: Vec<i64> = workers
        .iter()
        .map(|w| {
            count(
                s.db(),
                &format!(
                    "SELECT COUNT(*) FROM outbox_events WHERE claimed_by = '{}'",
                    w.id
                ),
            )
        })
        .collect();
    assert_eq!(by_worker.iter().sum::<i64>(), 1_000);
    eprintln!("events delivered per worker: {by_worker:?}");
}

#[test]
fn bad_worker_flags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let db = db.to_str().unwrap();
    for (args, needle) in [
        (vec!["--database-url", "mysql://x"], "--database-url"),
        (
            vec!["--database-url", "postgres://postgres@127.0.0.1:1/none"],
            "database",
        ),
        (vec!["--database-url", "sqlite:"], "--database-url"),
        (vec!["--db", db, "--fault", "explode"], "--fault"),
        (vec!["--db", db, "--fault-count", "2"], "--fault"),
        (
            vec![
                "--db",
                db,
                "--outbox-claim-timeout",
                "1m",
                "--processed-retention",
                "1m",
            ],
            "--processed-retention",
        ),
        (vec!["--db", db, "--addr", "127.0.0.1:0"], "--addr"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_idemkey-server"))
            .arg("worker")
            .args(&args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_idemkey-server"))
        .args(["--addr", "127.0.0.1:0", "worker"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "server flags do not mix with the worker"
    );
}
