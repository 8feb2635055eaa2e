//! Many requests at once: one key (one charge, one provider call, every answer
//! the charge or a 409) and many keys (one charge each).

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Barrier};
use std::thread;

use common::*;

fn hundred_concurrent_requests_with_one_key_make_one_charge_and_one_provider_call(b: Backend) {
    let s = Server::start_with(b, &["--faults", "--provider-latency-ms", "300"]);
    let (c, k) = (uid("cust"), uid("key"));
    let n = 100;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let (b, c, k, addr) = (barrier.clone(), c.clone(), k.clone(), s.addr);
            thread::spawn(move || {
                b.wait();
                charge(addr, &c, &k, BODY)
            })
        })
        .collect();
    let answers: Vec<Resp> = handles.into_iter().map(|h| h.join().unwrap()).collect();

    let mut fresh = 0;
    let mut bodies = HashSet::new();
    let mut conflicts = 0;
    for a in &answers {
        match a.status {
            201 => {
                if !a.replayed() {
                    fresh += 1;
                }
                bodies.insert(a.body.clone());
            }
            409 => {
                a.assert_problem(409);
                assert_eq!(a.header("retry-after"), Some("1"));
                conflicts += 1;
            }
            other => panic!("unexpected status {other}: {}", a.text()),
        }
    }
    assert_eq!(fresh, 1, "exactly one request did the work");
    assert_eq!(
        bodies.len(),
        1,
        "every 201 is the same charge, byte for byte"
    );
    assert!(
        conflicts > 0,
        "with a 300ms provider call, concurrent requests must see 409"
    );
    assert_eq!(ledger(s.addr, &c)["count"], 1);
    assert_eq!(provider_counts(s.addr, &c), (1, 1));
}

fn two_hundred_concurrent_requests_with_distinct_keys_make_two_hundred_charges(b: Backend) {
    let s = Server::start_with(b, &["--faults", "--provider-latency-ms", "50"]);
    let c = uid("cust");
    let n = 200;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (b, c, addr) = (barrier.clone(), c.clone(), s.addr);
            thread::spawn(move || {
                let k = format!("k-{i}");
                b.wait();
                (k.clone(), charge(addr, &c, &k, BODY))
            })
        })
        .collect();
    let mut ids = HashSet::new();
    for h in handles {
        let (k, r) = h.join().unwrap();
        assert_eq!(r.status, 201, "{k}: {}", r.text());
        assert!(!r.replayed());
        assert_eq!(r.json()["key"].as_str(), Some(k.as_str()));
        ids.insert(r.json()["id"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), n);
    let l = ledger(s.addr, &c);
    assert_eq!(l["count"], n);
    let keys: HashSet<&str> = charge_keys(&l).into_iter().collect();
    assert_eq!(keys.len(), n);
    assert_eq!(provider_counts(s.addr, &c), (n as i64, n as i64));
}

both_stores!(
    hundred_concurrent_requests_with_one_key_make_one_charge_and_one_provider_call,
    two_hundred_concurrent_requests_with_distinct_keys_make_two_hundred_charges,
);
