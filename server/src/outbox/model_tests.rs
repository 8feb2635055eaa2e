//! The delivery rules, checked against the in-memory model with a clock the
//! test moves: random crashes before the ack, failures before the receipt,
//! workers killed mid-batch, the processed-ids reaper running throughout.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::outbox::config::OutboxConfig;
use crate::outbox::contract::{self, Harness};
use crate::outbox::event::{EventState, NewEvent};
use crate::outbox::faults::{DeliveryFault, DeliveryFaults};
use crate::outbox::model::Model;
use crate::outbox::relay::{Crashed, Tick, Worker};
use async_trait::async_trait;

use crate::outbox::storage::OutboxStorage;

fn cfg(claim_ms: u64, retention_ms: u64, batch: usize) -> OutboxConfig {
    OutboxConfig {
        claim_timeout: Duration::from_millis(claim_ms),
        retention: Duration::from_millis(retention_ms),
        batch,
        poll: Duration::from_millis(10),
        mailer_latency: Duration::ZERO,
    }
}

fn event(n: usize) -> NewEvent {
    NewEvent {
        id: format!("evt_{n}"),
        customer: format!("c{}", n % 3),
        charge_id: format!("ch_{n}"),
        amount: 100 + n as u64,
        currency: "eur".into(),
    }
}

/// xorshift64: reproducible randomness without a dependency.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Faults drawn at random while `on`: `fail` and `crash` per cent.
struct RandomFaults {
    rng: Mutex<Rng>,
    on: AtomicBool,
    fail: u64,
    crash: u64,
}

impl DeliveryFaults for RandomFaults {
    fn take(&self, _customer: &str, _event_id: &str) -> Option<DeliveryFault> {
        if !self.on.load(Ordering::SeqCst) {
            return None;
        }
        let roll = self.rng.lock().unwrap().below(100);
        if roll < self.fail {
            Some(DeliveryFault::FailBeforeReceipt)
        } else if roll < self.fail + self.crash {
            Some(DeliveryFault::CrashBeforeAck)
        } else {
            None
        }
    }
}

/// The given fault for the next `n` deliveries, then none.
struct Next(Mutex<Vec<DeliveryFault>>);
impl DeliveryFaults for Next {
    fn take(&self, _customer: &str, _event_id: &str) -> Option<DeliveryFault> {
        self.0.lock().unwrap().pop()
    }
}
fn next(f: DeliveryFault, n: usize) -> Arc<Next> {
    Arc::new(Next(Mutex::new(vec![f; n])))
}

async fn tick(w: &Worker) -> Result<Tick, Crashed> {
    w.tick().await.expect("the model never fails")
}

#[derive(Default, Debug)]
struct Seen {
    crashes: usize,
    kills: usize,
    duplicates: usize,
    failed: usize,
}

/// 300 events, 3 workers, random faults and kills for a while, then a calm
/// stretch until everything is delivered.
async fn chaos(dedupe: bool, seed: u64) -> (Arc<Model>, Seen) {
    let m = Model::new(dedupe);
    let storage: Arc<dyn OutboxStorage> = m.clone();
    let faults = Arc::new(RandomFaults {
        rng: Mutex::new(Rng(seed)),
        on: AtomicBool::new(true),
        fail: 10,
        crash: 10,
    });
    let c = cfg(1_000, 600_000, 7);
    let mut workers: Vec<Worker> = (0..3)
        .map(|_| Worker::new(storage.clone(), faults.clone(), c.clone()))
        .collect();
    let mut rng = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut seen = Seen::default();
    let mut inserted = 0;
    for step in 0..3_000 {
        if step == 2_000 {
            faults.on.store(false, Ordering::SeqCst);
        }
        if inserted < 300 && rng.below(2) == 0 {
            m.insert(event(inserted));
            inserted += 1;
        }
        let i = rng.below(3) as usize;
        if faults.on.load(Ordering::SeqCst) && rng.below(50) == 0 {
            // kill -9 right after a claim: the batch is claimed, nothing else.
            m.claim(workers[i].id(), 7, 1_000).await.unwrap();
            workers[i] = Worker::new(storage.clone(), faults.clone(), c.clone());
            seen.kills += 1;
        }
        match tick(&workers[i]).await {
            Ok(t) => {
                seen.duplicates += t.duplicates;
                seen.failed += t.failed;
            }
            Err(_) => {
                workers[i] = Worker::new(storage.clone(), faults.clone(), c.clone());
                seen.crashes += 1;
            }
        }
        m.reap(600_000).await.unwrap();
        m.advance(rng.below(120) as i64);
    }
    (m, seen)
}

#[tokio::test]
async fn one_receipt_per_event_through_crashes_failures_and_kills() {
    for seed in [1, 7, 42, 2026] {
        let (m, seen) = chaos(true, seed).await;
        assert!(
            seen.crashes > 10 && seen.kills > 5 && seen.duplicates > 10 && seen.failed > 10,
            "{seen:?}"
        );
        assert_eq!(
            m.open_and_dead(),
            (0, 0),
            "seed {seed}: everything delivered"
        );
        let per = m.receipts_per_charge();
        assert_eq!(per.len(), 300);
        let wrong: Vec<_> = per.iter().filter(|(_, n)| **n != 1).collect();
        assert!(
            wrong.is_empty(),
            "seed {seed}: charges without exactly one receipt: {wrong:?}"
        );
    }
}

#[tokio::test]
async fn a_consumer_that_skips_the_processed_check_sends_duplicates() {
    // The same run with the dedupe left out: the check above would fail.
    let (m, _) = chaos(false, 42).await;
    let doubled = m.receipts_per_charge().values().filter(|n| **n > 1).count();
    assert!(doubled > 10, "only {doubled} charges got two receipts");
}

#[tokio::test]
async fn a_crash_before_the_ack_is_redelivered_after_the_claim_timeout_and_skipped() {
    let m = Model::new(true);
    let storage: Arc<dyn OutboxStorage> = m.clone();
    let c = cfg(5_000, 60_000, 10);
    for n in 0..5 {
        m.insert(event(n));
    }
    let dying = Worker::new(
        storage.clone(),
        next(DeliveryFault::CrashBeforeAck, 1),
        c.clone(),
    );
    assert!(tick(&dying).await.is_err(), "the worker dies");
    assert_eq!(
        m.receipts_per_charge().values().sum::<usize>(),
        5,
        "its receipts are committed"
    );
    assert_eq!(m.open_and_dead(), (5, 0), "none of its batch is acked");

    let next_worker = Worker::new(
        storage.clone(),
        Arc::new(crate::outbox::faults::NoFaults),
        c,
    );
    m.advance(4_999);
    assert_eq!(
        tick(&next_worker).await.unwrap().claimed,
        0,
        "the claims are fresh for 5 s"
    );
    m.advance(1);
    let t = tick(&next_worker).await.unwrap();
    assert_eq!((t.claimed, t.written, t.duplicates), (5, 0, 5));
    assert_eq!(m.open_and_dead(), (0, 0));
    assert!(m.receipts_per_charge().values().all(|n| *n == 1));
    let v = m.receipts("c1").await.unwrap();
    assert_eq!(v.receipts.len(), 2);
    assert!(v.events.iter().all(|e| e.state == EventState::Delivered
        && e.deliveries == 2
        && e.duplicates_skipped == 1));
}

#[tokio::test]
async fn a_failed_delivery_backs_off_and_is_retried_until_it_goes_through() {
    let m = Model::new(true);
    let c = cfg(5_000, 60_000, 10);
    m.insert(event(0));
    let w = Worker::new(m.clone(), next(DeliveryFault::FailBeforeReceipt, 3), c);
    for (n, wait) in [200, 400, 800].into_iter().enumerate() {
        assert_eq!(tick(&w).await.unwrap().failed, 1, "failure {n}");
        m.advance(wait - 1);
        assert_eq!(
            tick(&w).await.unwrap().claimed,
            0,
            "still backing off after failure {n}"
        );
        m.advance(1);
    }
    assert_eq!(tick(&w).await.unwrap().written, 1);
    let e = &m.receipts("c0").await.unwrap().events[0];
    assert_eq!(
        (e.deliveries, e.failures, e.state),
        (4, 3, EventState::Delivered)
    );
}

/// Every delivery crashes before its ack while the reaper runs: each event
/// is redelivered all through its window, never gets a second receipt, and
/// is parked once the window closes.
async fn crash_forever(reaper_retention_ms: i64) -> Arc<Model> {
    let m = Model::new(true);
    let storage: Arc<dyn OutboxStorage> = m.clone();
    let c = cfg(2_000, 10_000, 10);
    let always = Arc::new(RandomFaults {
        rng: Mutex::new(Rng(3)),
        on: AtomicBool::new(true),
        fail: 0,
        crash: 100,
    });
    for step in 0..200 {
        if step < 40 && step % 4 == 0 {
            m.insert(event(step));
        }
        let w = Worker::new(storage.clone(), always.clone(), c.clone());
        let _ = tick(&w).await;
        m.reap(reaper_retention_ms).await.unwrap();
        m.advance(250);
    }
    m
}

#[tokio::test]
async fn the_processed_ids_reaper_never_lets_a_redelivery_inside_the_window_through() {
    let m = crash_forever(10_000).await;
    assert_eq!(
        m.open_and_dead(),
        (0, 10),
        "every event parked when its window closed"
    );
    let per = m.receipts_per_charge();
    assert!(per.values().all(|n| *n == 1), "{per:?}");
    let views = m.receipts("c0").await.unwrap().events;
    assert!(
        views.iter().all(|e| e.deliveries >= 3),
        "redelivered inside the window: {views:?}"
    );
    assert_eq!(m.processed_ids(), 0, "and the ids were reaped in the end");
}

#[tokio::test]
async fn a_reaper_with_a_shorter_retention_than_the_window_lets_duplicates_through() {
    // The control: reaping ids younger than the window breaks the promise.
    let m = crash_forever(3_000).await;
    assert!(m.receipts_per_charge().values().any(|n| *n > 1));
}

struct ModelHarness(Arc<Model>);

#[async_trait]
impl Harness for ModelHarness {
    fn storage(&self) -> Arc<dyn OutboxStorage> {
        self.0.clone()
    }
    async fn insert(&self, e: NewEvent) {
        self.0.insert(e);
    }
    async fn pass(&self, ms: i64) {
        self.0.advance(ms);
    }
    fn unit(&self) -> i64 {
        1_000
    }
}

#[tokio::test]
async fn the_model_keeps_the_storage_contract() {
    contract::check(&ModelHarness(Model::new(true))).await;
}
