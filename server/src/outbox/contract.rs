//! The contract of [`OutboxStorage`], one suite for every store: the model
//! on its moved clock, SQLite and PostgreSQL on their real ones.
//!
//! Times are multiples of the harness's `unit` (ms): large for the model,
//! small enough for a real clock to keep the suite quick. Claims are checked
//! only well away from their timeout, so a real clock cannot make it flaky.

use std::sync::Arc;

use crate::outbox::event::{Consumed, Event, EventState, NewEvent};
use async_trait::async_trait;

use crate::outbox::storage::OutboxStorage;

/// A store under test.
#[async_trait]
pub trait Harness: Sync {
    /// The store.
    fn storage(&self) -> Arc<dyn OutboxStorage>;
    /// Inserts an event as phase 3 would (in a transaction of its own here).
    async fn insert(&self, e: NewEvent);
    /// Lets `ms` pass on the store's clock.
    async fn pass(&self, ms: i64);
    /// The time unit, in ms.
    fn unit(&self) -> i64;
}

fn new_event(customer: &str, n: usize) -> NewEvent {
    NewEvent {
        id: format!("evt_{customer}_{n}"),
        customer: customer.to_string(),
        charge_id: format!("ch_{customer}_{n}"),
        amount: 4200,
        currency: "eur".into(),
    }
}

fn ids(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.id.as_str()).collect()
}

/// Runs every case on fresh customers of the harness's store.
pub async fn check<H: Harness>(h: &H) {
    claims_do_not_overlap_until_they_time_out(h).await;
    the_consumer_writes_once_and_counts_the_redelivery(h).await;
    an_event_older_than_the_window_is_refused(h).await;
    acked_and_parked_events_are_never_claimed_again(h).await;
    a_released_event_waits_for_its_retry_time(h).await;
    the_reaper_keeps_young_ids_and_deletes_old_ones(h).await;
}

async fn claims_do_not_overlap_until_they_time_out<H: Harness>(h: &H) {
    let (s, u) = (h.storage(), h.unit());
    for n in 0..3 {
        h.insert(new_event("claims", n)).await;
    }
    let a = s.claim("wk_a", 2, 3 * u).await.unwrap();
    assert_eq!(
        ids(&a),
        ["evt_claims_0", "evt_claims_1"],
        "oldest first, at most the limit"
    );
    assert!(a
        .iter()
        .all(|e| e.attempts == 1 && e.customer == "claims" && e.amount == 4200));
    let b = s.claim("wk_b", 10, 3 * u).await.unwrap();
    assert_eq!(
        ids(&b),
        ["evt_claims_2"],
        "another worker gets only what is free"
    );
    assert!(
        s.claim("wk_c", 10, 3 * u).await.unwrap().is_empty(),
        "fresh claims are kept"
    );
    h.pass(4 * u).await;
    let c = s.claim("wk_c", 10, 3 * u).await.unwrap();
    assert_eq!(c.len(), 3, "stale claims are taken again");
    assert!(c.iter().all(|e| e.attempts == 2), "{c:?}");
    s.ack(&c.iter().map(|e| e.id.clone()).collect::<Vec<_>>())
        .await
        .unwrap();
}

async fn the_consumer_writes_once_and_counts_the_redelivery<H: Harness>(h: &H) {
    let (s, u) = (h.storage(), h.unit());
    h.insert(new_event("consume", 0)).await;
    let ev = s.claim("wk_a", 10, 3 * u).await.unwrap();
    let first = s.consume(&ev, 100 * u).await.unwrap();
    let [Consumed::Written(r)] = first.as_slice() else {
        panic!("{first:?}")
    };
    assert_eq!(
        (r.event_id.as_str(), r.charge_id.as_str()),
        ("evt_consume_0", "ch_consume_0")
    );
    assert_eq!(
        s.consume(&ev, 100 * u).await.unwrap(),
        [Consumed::Duplicate]
    );
    let view = s.receipts("consume").await.unwrap();
    assert_eq!(view.receipts.len(), 1);
    assert_eq!(view.receipts[0], *r);
    let e = &view.events[0];
    assert_eq!(
        (e.state, e.deliveries, e.duplicates_skipped, e.delivered_at),
        (EventState::Pending, 1, 1, None)
    );
    s.ack(&[ev[0].id.clone()]).await.unwrap();
    let e = &s.receipts("consume").await.unwrap().events[0];
    assert_eq!(e.state, EventState::Delivered);
    assert!(e.delivered_at.is_some_and(|t| t >= e.created_at));
    assert!(
        s.receipts("nobody").await.unwrap().receipts.is_empty(),
        "receipts are per customer"
    );
}

async fn an_event_older_than_the_window_is_refused<H: Harness>(h: &H) {
    let (s, u) = (h.storage(), h.unit());
    h.insert(new_event("old", 0)).await;
    let ev = s.claim("wk_a", 10, 3 * u).await.unwrap();
    h.pass(2 * u).await;
    assert_eq!(s.consume(&ev, u).await.unwrap(), [Consumed::Expired]);
    s.park(&ev[0].id, "too old").await.unwrap();
    let view = s.receipts("old").await.unwrap();
    assert!(view.receipts.is_empty(), "no receipt for a refused event");
    assert_eq!(view.events[0].state, EventState::Dead);
    assert_eq!(view.events[0].duplicates_skipped, 0);
}

async fn acked_and_parked_events_are_never_claimed_again<H: Harness>(h: &H) {
    let (s, u) = (h.storage(), h.unit());
    h.insert(new_event("done", 0)).await;
    h.insert(new_event("done", 1)).await;
    let ev = s.claim("wk_a", 10, 3 * u).await.unwrap();
    assert_eq!(ev.len(), 2);
    s.consume(&ev[..1], 100 * u).await.unwrap();
    s.ack(&[ev[0].id.clone()]).await.unwrap();
    s.park(&ev[1].id, "test").await.unwrap();
    h.pass(4 * u).await;
    let again = s.claim("wk_b", 10, 3 * u).await.unwrap();
    assert!(again.iter().all(|e| e.customer != "done"), "{again:?}");
}

async fn a_released_event_waits_for_its_retry_time<H: Harness>(h: &H) {
    let (s, u) = (h.storage(), h.unit());
    h.insert(new_event("retry", 0)).await;
    let ev = s.claim("wk_a", 10, 100 * u).await.unwrap();
    s.release(&ev[0].id, "wk_other", "not mine", 0)
        .await
        .unwrap();
    assert!(
        s.claim("wk_b", 10, 100 * u).await.unwrap().is_empty(),
        "only the holder releases"
    );
    s.release(&ev[0].id, "wk_a", "mailer down", 3 * u)
        .await
        .unwrap();
    assert!(
        s.claim("wk_b", 10, 100 * u).await.unwrap().is_empty(),
        "not before its retry time"
    );
    h.pass(4 * u).await;
    let again = s.claim("wk_b", 10, 100 * u).await.unwrap();
    assert_eq!((ids(&again), again[0].attempts), (vec!["evt_retry_0"], 2));
    let e = &s.receipts("retry").await.unwrap().events[0];
    assert_eq!((e.failures, e.deliveries), (1, 2));
    s.ack(&[again[0].id.clone()]).await.unwrap();
}

async fn the_reaper_keeps_young_ids_and_deletes_old_ones<H: Harness>(h: &H) {
    let (s, u) = (h.storage(), h.unit());
    h.insert(new_event("reap", 0)).await;
    let old = s.claim("wk_a", 10, 100 * u).await.unwrap();
    s.consume(&old, 100 * u).await.unwrap();
    h.pass(6 * u).await;
    h.insert(new_event("reap", 1)).await;
    let young = s.claim("wk_a", 10, 100 * u).await.unwrap();
    assert_eq!(ids(&young), ["evt_reap_1"]);
    s.consume(&young, 100 * u).await.unwrap();
    assert!(s.reap(4 * u).await.unwrap() >= 1, "the old id goes");
    assert_eq!(
        s.consume(&young, 100 * u).await.unwrap(),
        [Consumed::Duplicate],
        "the young id stays"
    );
    // The proof that the old id went: a redelivery now writes again. This is
    // why the relay never delivers an event older than the window.
    assert!(matches!(
        s.consume(&old, 100 * u).await.unwrap()[..],
        [Consumed::Written(_)]
    ));
}
