//! Tests of The fault registry.

use super::*;
use crate::faults::request as fault_request;

fn sched(f: &Faults, customer: &str, v: Value) {
    f.schedule(customer, fault_request::parse(v).unwrap())
        .unwrap();
}

fn mode(f: Option<Fault>) -> Option<FaultMode> {
    f.map(|f| f.mode)
}

#[test]
fn queues_are_per_customer_and_counted() {
    let f = Faults::new(true);
    sched(&f, "a", json!({"mode": "error-after-commit", "count": 2}));
    sched(
        &f,
        "a",
        json!({"mode": "delay-after-commit", "delay_ms": 5}),
    );
    assert_eq!(f.take("b", None, "fp"), None);
    assert_eq!(
        mode(f.take("a", Some("k1"), "fp")),
        Some(FaultMode::ErrorAfterCommit)
    );
    assert_eq!(
        mode(f.take("a", Some("k1"), "fp")),
        Some(FaultMode::ErrorAfterCommit)
    );
    assert_eq!(
        f.take("a", None, "fp2"),
        Some(Fault {
            mode: FaultMode::DelayAfterCommit,
            delay_ms: 5,
            respond: None,
        })
    );
    assert_eq!(f.take("a", Some("k1"), "fp"), None);
    let listed = f.list("a");
    assert_eq!(listed["scheduled"], json!([]));
    assert_eq!(
        listed["taken"],
        json!([
            {"mode": "error-after-commit", "key": "k1", "fingerprint": "fp"},
            {"mode": "error-after-commit", "key": "k1", "fingerprint": "fp"},
            {"mode": "delay-after-commit", "key": null, "fingerprint": "fp2"},
        ])
    );
    sched(&f, "a", json!({"mode": "drop-after-commit"}));
    f.schedule("a", None).unwrap();
    assert_eq!(f.take("a", None, "fp"), None);
    assert_eq!(f.list("a")["taken"], json!([]), "none clears the log too");
}

#[test]
fn respond_and_drop_before_commit_refuse_before_work() {
    let f = Faults::new(true);
    sched(
        &f,
        "a",
        json!({"mode": "respond", "status": 429, "retry_after": "1"}),
    );
    sched(&f, "a", json!({"mode": "drop-before-commit"}));
    sched(&f, "a", json!({"mode": "delay-after-commit"}));
    let shown = &f.list("a")["scheduled"][0];
    assert_eq!(
        *shown,
        json!({"mode": "respond", "remaining": 1, "delay_ms": 1000, "status": 429, "retry_after": "1", "body": ""})
    );
    let phases: &dyn ChargeFaults = &f;
    match phases.take("a", None, "fp") {
        Some(ChargeFault::Respond(c)) => {
            assert_eq!((c.status, c.retry_after.as_deref()), (429, Some("1")))
        }
        other => panic!("{other:?}"),
    }
    let drop = phases.take("a", None, "fp").unwrap();
    assert!(drop == ChargeFault::DropBeforeCommit && drop.before_commit());
    assert!(!phases.take("a", None, "fp").unwrap().before_commit());
}

#[test]
fn worker_units_are_left_to_the_worker_and_request_units_to_requests() {
    let f = Faults::new(true);
    sched(&f, "a", json!({"mode": "worker-crash-before-ack"}));
    sched(&f, "a", json!({"mode": "error-after-commit"}));
    sched(
        &f,
        "a",
        json!({"mode": "worker-fail-before-receipt", "count": 2}),
    );
    assert_eq!(
        mode(f.take("a", Some("k"), "fp")),
        Some(FaultMode::ErrorAfterCommit),
        "a request skips the worker's units"
    );
    assert_eq!(f.take("a", Some("k"), "fp"), None);
    let worker: &dyn DeliveryFaults = &f;
    assert_eq!(worker.take("b", "evt_0"), None, "per customer");
    assert_eq!(
        worker.take("a", "evt_1"),
        Some(DeliveryFault::CrashBeforeAck)
    );
    assert_eq!(
        worker.take("a", "evt_1"),
        Some(DeliveryFault::FailBeforeReceipt)
    );
    assert_eq!(
        worker.take("a", "evt_2"),
        Some(DeliveryFault::FailBeforeReceipt)
    );
    assert_eq!(worker.take("a", "evt_2"), None);
    assert_eq!(
        f.list("a")["taken"],
        json!([
            {"mode": "error-after-commit", "key": "k", "fingerprint": "fp"},
            {"mode": "worker-crash-before-ack", "key": null, "fingerprint": "", "event": "evt_1"},
            {"mode": "worker-fail-before-receipt", "key": null, "fingerprint": "", "event": "evt_1"},
            {"mode": "worker-fail-before-receipt", "key": null, "fingerprint": "", "event": "evt_2"},
        ])
    );
    let off = Faults::new(false);
    sched(&off, "a", json!({"mode": "worker-crash-before-ack"}));
    assert_eq!(DeliveryFaults::take(&off, "a", "evt_1"), None);
}

#[test]
fn disabled_registry_never_yields() {
    let f = Faults::new(false);
    sched(&f, "a", json!({"mode": "drop-after-commit"}));
    assert_eq!(f.take("a", None, "fp"), None);
}

#[test]
fn queues_and_logs_are_bounded() {
    let f = Faults::new(true);
    for _ in 0..MAX_QUEUE {
        sched(&f, "a", json!({"mode": "error-after-commit"}));
    }
    let more = fault_request::parse(json!({"mode": "error-after-commit"})).unwrap();
    assert!(f.schedule("a", more).is_err());
    for _ in 0..MAX_QUEUE {
        f.take("a", None, "fp").unwrap();
    }
    sched(&f, "a", json!({"mode": "error-after-commit", "count": 10}));
    for _ in 0..10 {
        f.take("a", None, "fp").unwrap();
    }
    assert_eq!(f.list("a")["taken"].as_array().unwrap().len(), MAX_TAKEN);
}
