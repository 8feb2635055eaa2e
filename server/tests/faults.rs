//! Fault injection against the real binary: each mode, customer scoping, the
//! naive endpoint, ledger reset, and that none of it exists without --faults.

mod common;

use std::time::{Duration, Instant};

use common::*;

fn start(b: Backend) -> Server {
    Server::start_with(b, &["--faults", "--provider-latency-ms", "10"])
}

fn drop_after_commit_closes_the_connection_and_the_retry_replays(b: Backend) {
    let s = start(b);
    let (c, k) = (uid("cust"), uid("key"));
    let q = fault(s.addr, &c, r#"{"mode":"drop-after-commit"}"#);
    assert_eq!(q["scheduled"][0]["mode"], "drop-after-commit");
    assert_eq!(q["scheduled"][0]["remaining"], 1);
    let dropped = try_charge(s.addr, &c, &k, BODY).unwrap();
    assert!(
        dropped.is_none(),
        "expected no response at all, got {dropped:?}"
    );
    assert_eq!(
        ledger(s.addr, &c)["count"],
        1,
        "the charge was committed before the drop"
    );
    let retry = charge(s.addr, &c, &k, BODY);
    assert_eq!(retry.status, 201);
    assert!(retry.replayed());
    assert_eq!(ledger(s.addr, &c)["count"], 1);
    assert_eq!(
        get_json(s.addr, "/api/faults", &c)["scheduled"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

fn error_after_commit_is_502_and_the_retry_replays_the_201(b: Backend) {
    let s = start(b);
    let (c, k) = (uid("cust"), uid("key"));
    fault(s.addr, &c, r#"{"mode":"error-after-commit"}"#);
    charge(s.addr, &c, &k, BODY).assert_problem(502);
    assert_eq!(ledger(s.addr, &c)["count"], 1);
    let retry = charge(s.addr, &c, &k, BODY);
    assert_eq!(retry.status, 201);
    assert!(retry.replayed());
    assert_eq!(retry.json()["id"], ledger(s.addr, &c)["charges"][0]["id"]);
}

fn fail_before_commit_is_503_with_nothing_stored(b: Backend) {
    let s = start(b);
    let (c, k) = (uid("cust"), uid("key"));
    fault(s.addr, &c, r#"{"mode":"fail-before-commit","count":2}"#);
    for _ in 0..2 {
        charge(s.addr, &c, &k, BODY).assert_problem(503);
        assert_eq!(ledger(s.addr, &c)["count"], 0);
        assert_eq!(
            get_json(s.addr, "/api/provider", &c)["calls"],
            0,
            "the provider is not called"
        );
    }
    // Nothing was stored, so the key is still free: a different payload is fine.
    let ok = charge(s.addr, &c, &k, r#"{"amount":1,"currency":"gbp"}"#);
    assert_eq!(ok.status, 201);
    assert!(!ok.replayed());
    assert_eq!(ledger(s.addr, &c)["count"], 1);
}

fn delay_after_commit_answers_late_but_answers(b: Backend) {
    let s = start(b);
    let (c, k) = (uid("cust"), uid("key"));
    fault(
        s.addr,
        &c,
        r#"{"mode":"delay-after-commit","delay_ms":1500}"#,
    );
    let (addr, c1, k1) = (s.addr, c.clone(), k.clone());
    let t0 = Instant::now();
    let delayed = std::thread::spawn(move || charge(addr, &c1, &k1, BODY));
    // The delay comes after the commit: the key is done while the answer waits.
    while key_state(s.db(), &c, &k).as_deref() != Some("done") {
        assert!(t0.elapsed() < Duration::from_secs(30), "never committed");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!delayed.is_finished(), "answered before the delay");
    let r = delayed.join().unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(1500),
        "answered after {:?}",
        t0.elapsed()
    );
    assert_eq!(r.status, 201);
    assert!(!r.replayed());
    let k2 = uid("key");
    // The next one is not delayed: the unit was used up.
    let t1 = Instant::now();
    assert_eq!(charge(s.addr, &c, &k2, BODY).status, 201);
    assert!(
        t1.elapsed() < Duration::from_millis(1500),
        "took {:?}",
        t1.elapsed()
    );
}

fn faults_apply_only_to_the_scheduling_customer_and_only_to_work(b: Backend) {
    let s = start(b);
    let (victim, bystander) = (uid("victim"), uid("bystander"));
    let k = uid("key");
    assert_eq!(charge(s.addr, &victim, &k, BODY).status, 201);
    fault(s.addr, &victim, r#"{"mode":"error-after-commit"}"#);
    // Another customer's requests never take it.
    for _ in 0..3 {
        assert_eq!(charge(s.addr, &bystander, &uid("key"), BODY).status, 201);
    }
    // A replay does no work and does not take it either.
    assert!(charge(s.addr, &victim, &k, BODY).replayed());
    assert_eq!(
        get_json(s.addr, "/api/faults", &victim)["scheduled"][0]["remaining"],
        1
    );
    charge(s.addr, &victim, &uid("key"), BODY).assert_problem(502);
    assert_eq!(
        get_json(s.addr, "/api/faults", &victim)["scheduled"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

fn mode_none_clears_and_bad_fault_requests_are_400(b: Backend) {
    let s = start(b);
    let c = uid("cust");
    fault(s.addr, &c, r#"{"mode":"fail-before-commit","count":5}"#);
    fault(s.addr, &c, r#"{"mode":"delay-after-commit","delay_ms":10}"#);
    assert_eq!(
        get_json(s.addr, "/api/faults", &c)["scheduled"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let cleared = fault(s.addr, &c, r#"{"mode":"none"}"#);
    assert_eq!(cleared["scheduled"].as_array().unwrap().len(), 0);
    assert_eq!(charge(s.addr, &c, &uid("key"), BODY).status, 201);
    for bad in [
        r#"{"mode":"explode"}"#,
        r#"{"mode":"drop-after-commit","count":0}"#,
        r#"{"count":1}"#,
        "[",
        r#"{"mode":"delay-after-commit","delay_ms":"5"}"#,
    ] {
        let r = request(
            s.addr,
            "POST",
            "/api/faults",
            &[("Content-Type", "application/json"), ("X-Customer-Id", &c)],
            bad.as_bytes(),
        );
        r.assert_problem(400);
    }
}

fn naive_endpoint_charges_every_time_and_takes_faults(b: Backend) {
    let s = start(b);
    let c = uid("cust");
    let post = |body: &str| {
        request(
            s.addr,
            "POST",
            "/api/naive/charges",
            &[("Content-Type", "application/json"), ("X-Customer-Id", &c)],
            body.as_bytes(),
        )
    };
    for _ in 0..3 {
        let r = post(BODY);
        assert_eq!(r.status, 201);
        assert!(r.json()["key"].is_null());
    }
    let l = ledger(s.addr, &c);
    assert_eq!(l["count"], 3, "the naive server double-charges");
    fault(s.addr, &c, r#"{"mode":"fail-before-commit"}"#);
    post(BODY).assert_problem(503);
    fault(s.addr, &c, r#"{"mode":"error-after-commit"}"#);
    post(BODY).assert_problem(502);
    assert_eq!(
        ledger(s.addr, &c)["count"],
        4,
        "error-after-commit still charged"
    );
    post(r#"{"amount":5,"currency":"usd","card":"4000000000000002"}"#).assert_problem(402);
    post(r#"{"amount":"5"}"#).assert_problem(400);
}

fn delete_empties_one_customers_ledger_and_keys(b: Backend) {
    let s = start(b);
    let (a, b) = (uid("a"), uid("b"));
    let k = uid("key");
    assert_eq!(charge(s.addr, &a, &k, BODY).status, 201);
    assert_eq!(charge(s.addr, &b, &uid("key"), BODY).status, 201);
    let d = request(
        s.addr,
        "DELETE",
        "/api/charges",
        &[("X-Customer-Id", &a)],
        b"",
    );
    assert_eq!(d.status, 200);
    assert_eq!(d.json()["deleted_charges"], 1);
    assert_eq!(ledger(s.addr, &a)["count"], 0);
    assert_eq!(
        ledger(s.addr, &b)["count"],
        1,
        "other customers are untouched"
    );
    // The key went with the ledger: the same key is a new operation.
    let again = charge(s.addr, &a, &k, BODY);
    assert_eq!(again.status, 201);
    assert!(!again.replayed());
}

fn without_faults_flag_there_is_no_fault_api_no_naive_endpoint_no_reset(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let c = uid("cust");
    request(
        s.addr,
        "POST",
        "/api/faults",
        &[("Content-Type", "application/json"), ("X-Customer-Id", &c)],
        br#"{"mode":"drop-after-commit"}"#,
    )
    .assert_problem(404);
    request(s.addr, "GET", "/api/faults", &[], b"").assert_problem(404);
    request(
        s.addr,
        "POST",
        "/api/naive/charges",
        &[("Content-Type", "application/json")],
        BODY.as_bytes(),
    )
    .assert_problem(404);
    request(s.addr, "GET", "/api/provider", &[], b"").assert_problem(404);
    let k = uid("key");
    assert_eq!(charge(s.addr, &c, &k, BODY).status, 201);
    let d = request(
        s.addr,
        "DELETE",
        "/api/charges",
        &[("X-Customer-Id", &c)],
        b"",
    );
    d.assert_problem(405);
    assert_eq!(ledger(s.addr, &c)["count"], 1);
}

both_stores!(
    drop_after_commit_closes_the_connection_and_the_retry_replays,
    error_after_commit_is_502_and_the_retry_replays_the_201,
    fail_before_commit_is_503_with_nothing_stored,
    delay_after_commit_answers_late_but_answers,
    faults_apply_only_to_the_scheduling_customer_and_only_to_work,
    mode_none_clears_and_bad_fault_requests_are_400,
    naive_endpoint_charges_every_time_and_takes_faults,
    delete_empties_one_customers_ledger_and_keys,
    without_faults_flag_there_is_no_fault_api_no_naive_endpoint_no_reset,
);
