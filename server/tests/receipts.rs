//! After the charge, one receipt (in-process worker): one event per charge
//! and none per replay or recovery; a crash before the ack and failures
//! before the receipt are redelivered and still give one receipt; the
//! processed-ids reaper never lets a redelivery inside its window through.

mod common;
mod outbox_support;

both_stores!(
    one_event_and_one_receipt_per_charge_none_per_replay,
    a_charge_recovered_by_the_reaper_gets_one_event,
    a_crash_of_the_worker_before_its_ack_is_redelivered_and_gives_one_receipt,
    a_consumer_that_fails_before_the_receipt_is_retried_and_sends_one,
    the_processed_ids_reaper_never_lets_a_redelivery_inside_its_window_through,
    receipts_endpoint_refuses_a_bad_customer_and_other_methods,
    ledger_reset_empties_the_customers_outbox_and_receipts,
);

use std::time::Duration;

use common::*;
use outbox_support::*;

const QUICK: [&str; 6] = [
    "--outbox-claim-timeout",
    "1s",
    "--outbox-poll-interval",
    "50ms",
    "--provider-latency-ms",
    "5",
];

fn server(b: Backend, extra: &[&str]) -> Server {
    let mut args: Vec<&str> = vec!["--faults"];
    args.extend_from_slice(&QUICK);
    args.extend_from_slice(extra);
    Server::start_with(b, &args)
}

fn one_event_and_one_receipt_per_charge_none_per_replay(b: Backend) {
    let s = server(b, &[]);
    let c = uid("cust");
    let first = charge(s.addr, &c, "k1", BODY);
    assert_eq!(first.status, 201);
    for _ in 0..3 {
        assert!(charge(s.addr, &c, "k1", BODY).replayed());
    }
    assert_eq!(charge(s.addr, &c, "k2", BODY).status, 201);
    let naive = request(
        s.addr,
        "POST",
        "/api/naive/charges",
        &[("Content-Type", "application/json"), ("X-Customer-Id", &c)],
        BODY.as_bytes(),
    );
    assert_eq!(naive.status, 201);
    let declined = charge(
        s.addr,
        &c,
        "k3",
        r#"{"amount":100,"currency":"eur","card":"4000000000000002"}"#,
    );
    assert_eq!(declined.status, 402);

    let view = settled(s.addr, &c, 3, Duration::from_secs(10));
    let l = ledger(s.addr, &c);
    let mut charges: Vec<&str> = l["charges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ch| ch["id"].as_str().unwrap())
        .collect();
    charges.sort();
    let mut announced: Vec<&str> = view["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["charge_id"].as_str().unwrap())
        .collect();
    announced.sort();
    assert_eq!(
        announced, charges,
        "one event per charge (three), none for the replays or the decline"
    );
    assert_eq!(view["count"], 3);
    assert!(
        receipts_per_charge(&view).values().all(|n| *n == 1),
        "{view}"
    );
    for e in view["events"].as_array().unwrap() {
        assert_eq!(
            (
                e["type"].as_str(),
                e["state"].as_str(),
                e["deliveries"].as_i64()
            ),
            (Some("charge.succeeded"), Some("delivered"), Some(1)),
            "{e}"
        );
        assert!(e["id"].as_str().unwrap().starts_with("evt_"));
    }
    let r = &view["receipts"][0];
    assert!(
        r["id"].as_str().unwrap().starts_with("rcpt_")
            && r["event_id"].as_str().unwrap().starts_with("evt_"),
        "{r}"
    );
    assert!(
        r["created_at"].as_i64().unwrap() >= first.json()["created_at"].as_i64().unwrap() - 1_000
    );
    assert_eq!(
        receipts(s.addr, &uid("other"))["count"],
        0,
        "receipts are per customer"
    );
    assert_eq!(count(s.db(), "SELECT COUNT(*) FROM outbox_events"), 3);
}

fn a_charge_recovered_by_the_reaper_gets_one_event(b: Backend) {
    let db = Db::new(b);
    let c = uid("cust");
    {
        let mut s = Server::start_on(&db, &["--faults"]);
        fault(s.addr, &c, r#"{"mode":"crash-after-provider"}"#);
        assert!(try_charge(s.addr, &c, "k", BODY).unwrap().is_none());
        s.wait_exit(Duration::from_secs(10)).expect("aborted");
    }
    let mut args = vec![
        "--faults",
        "--lock-timeout",
        "300ms",
        "--reaper-interval",
        "100ms",
    ];
    args.extend_from_slice(&QUICK);
    let s = Server::start_on(&db, &args);
    let view = settled(s.addr, &c, 1, Duration::from_secs(15));
    assert_eq!(
        view["count"], 1,
        "the reaper's phase 3 wrote the charge and its event once"
    );
    assert!(charge(s.addr, &c, "k", BODY).replayed());
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        receipts(s.addr, &c)["events"].as_array().unwrap().len(),
        1,
        "and the replay adds none"
    );
}

fn a_crash_of_the_worker_before_its_ack_is_redelivered_and_gives_one_receipt(b: Backend) {
    let s = server(b, &[]);
    let c = uid("cust");
    let armed = fault(s.addr, &c, r#"{"mode":"worker-crash-before-ack"}"#);
    assert_eq!(armed["scheduled"][0]["mode"], "worker-crash-before-ack");
    let t0 = std::time::Instant::now();
    assert_eq!(
        charge(s.addr, &c, "k", BODY).status,
        201,
        "the request does not take the worker's fault"
    );
    let view = settled(s.addr, &c, 1, Duration::from_secs(15));
    let e = &view["events"][0];
    assert_eq!(
        (
            e["deliveries"].as_i64(),
            e["duplicates_skipped"].as_i64(),
            e["state"].as_str()
        ),
        (Some(2), Some(1), Some("delivered")),
        "{e}"
    );
    assert!(
        t0.elapsed() >= Duration::from_secs(1),
        "redelivered only after the claim timeout"
    );
    assert_eq!(view["count"], 1, "one receipt");
    let taken = get_json(s.addr, "/api/faults", &c)["taken"].clone();
    assert_eq!(taken[0]["mode"], "worker-crash-before-ack");
    assert_eq!(taken[0]["event"], e["id"]);
    let log = s.log_text();
    assert!(log.contains("crashed before its ack"), "{log}");
}

fn a_consumer_that_fails_before_the_receipt_is_retried_and_sends_one(b: Backend) {
    let s = server(b, &[]);
    let c = uid("cust");
    fault(
        s.addr,
        &c,
        r#"{"mode":"worker-fail-before-receipt","count":2}"#,
    );
    assert_eq!(charge(s.addr, &c, "k", BODY).status, 201);
    let view = settled(s.addr, &c, 1, Duration::from_secs(15));
    let e = &view["events"][0];
    assert_eq!(
        (
            e["deliveries"].as_i64(),
            e["failures"].as_i64(),
            e["duplicates_skipped"].as_i64()
        ),
        (Some(3), Some(2), Some(0)),
        "{e}"
    );
    assert_eq!(view["count"], 1);
}

fn the_processed_ids_reaper_never_lets_a_redelivery_inside_its_window_through(b: Backend) {
    // Every delivery crashes before its ack: each event is redelivered for
    // as long as its window (retention 2 s minus claim timeout 500 ms) lasts,
    // while the reaper deletes processed ids older than 2 s every 200 ms.
    let s = Server::start_with(
        b,
        &[
            "--faults",
            "--outbox-claim-timeout",
            "500ms",
            "--processed-retention",
            "2s",
            "--outbox-poll-interval",
            "50ms",
            "--provider-latency-ms",
            "5",
        ],
    );
    let c = uid("cust");
    fault(
        s.addr,
        &c,
        r#"{"mode":"worker-crash-before-ack","count":10000}"#,
    );
    for i in 0..5 {
        assert_eq!(charge(s.addr, &c, &format!("k{i}"), BODY).status, 201);
        std::thread::sleep(Duration::from_millis(150));
    }
    let view = settled(s.addr, &c, 5, Duration::from_secs(20));
    for e in view["events"].as_array().unwrap() {
        assert_eq!(e["state"], "dead", "parked once the window closed: {e}");
        assert!(
            e["deliveries"].as_i64().unwrap() >= 3,
            "redelivered inside the window: {e}"
        );
    }
    assert_eq!(view["count"], 5);
    assert!(
        receipts_per_charge(&view).values().all(|n| *n == 1),
        "{view}"
    );
    wait_for("the processed ids reaped", Duration::from_secs(10), || {
        (count(s.db(), "SELECT COUNT(*) FROM processed_events") == 0).then_some(())
    });
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        receipts(s.addr, &c)["count"],
        5,
        "and a parked event is never delivered again"
    );
}

fn receipts_endpoint_refuses_a_bad_customer_and_other_methods(b: Backend) {
    let s = server(b, &[]);
    let r = request(
        s.addr,
        "GET",
        "/api/receipts",
        &[("X-Customer-Id", "bad id")],
        b"",
    );
    r.assert_problem(400);
    let r = request(
        s.addr,
        "POST",
        "/api/receipts",
        &[("Content-Type", "application/json")],
        b"{}",
    );
    r.assert_problem(405);
    assert_eq!(
        receipts(s.addr, "nobody"),
        serde_json::json!({"customer": "nobody", "count": 0, "receipts": [], "events": []})
    );
}

fn ledger_reset_empties_the_customers_outbox_and_receipts(b: Backend) {
    let s = server(b, &[]);
    let c = uid("cust");
    charge(s.addr, &c, "k", BODY);
    settled(s.addr, &c, 1, Duration::from_secs(10));
    let r = request(
        s.addr,
        "DELETE",
        "/api/charges",
        &[("X-Customer-Id", &c)],
        b"",
    );
    assert_eq!(r.status, 200);
    assert_eq!(receipts(s.addr, &c)["count"], 0);
    assert_eq!(receipts(s.addr, &c)["events"], serde_json::json!([]));
}

#[test]
fn bad_outbox_flags_are_refused_at_start() {
    for (args, needle) in [
        (
            &[
                "--outbox-claim-timeout",
                "10s",
                "--processed-retention",
                "15s",
            ][..],
            "--processed-retention",
        ),
        (&["--outbox-batch", "0"], "--outbox-batch"),
        (&["--mailer-latency-ms", "x"], "--mailer-latency-ms"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_idemkey-server"))
            .args(["--addr", "127.0.0.1:0", "--db"])
            .arg(tempfile::tempdir().unwrap().path().join("x.db"))
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "no listening line");
    }
}
