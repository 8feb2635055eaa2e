//! A model of the outbox storage in memory, with a clock the test moves, and
//! the delivery rules checked against it under random crashes and failures.
//!
//! The model follows the contract of [`OutboxStorage`] literally; the SQL
//! stores are checked against the same rules by their own tests.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use crate::outbox::event::{
    expired, Consumed, Event, EventState, EventView, NewEvent, Receipt, ReceiptsView,
    CHARGE_SUCCEEDED,
};
use crate::store::StoreResult;
use async_trait::async_trait;

use crate::outbox::storage::OutboxStorage;

struct Row {
    ev: Event,
    claimed_by: Option<String>,
    claimed_at: Option<i64>,
    available_at: i64,
    failures: i64,
    delivered_at: Option<i64>,
    dead: bool,
}

#[derive(Default)]
struct State {
    rows: Vec<Row>,
    processed: HashMap<String, (i64, i64)>,
    receipts: Vec<Receipt>,
}

/// The in-memory outbox. `dedupe: false` is a consumer that forgets to
/// check processed ids: the tests show they would notice.
pub struct Model {
    now: AtomicI64,
    dedupe: bool,
    state: Mutex<State>,
}

impl Model {
    pub fn new(dedupe: bool) -> Arc<Model> {
        Arc::new(Model {
            now: AtomicI64::new(1_000_000),
            dedupe,
            state: Mutex::default(),
        })
    }

    pub fn now(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }

    pub fn advance(&self, ms: i64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }

    /// What phase 3 does: one event per charge.
    pub fn insert(&self, e: NewEvent) {
        let now = self.now();
        self.state.lock().unwrap().rows.push(Row {
            ev: Event {
                id: e.id,
                customer: e.customer,
                charge_id: e.charge_id,
                amount: e.amount,
                currency: e.currency,
                created_at: now,
                attempts: 0,
            },
            claimed_by: None,
            claimed_at: None,
            available_at: now,
            failures: 0,
            delivered_at: None,
            dead: false,
        });
    }

    /// Receipts per charge id.
    pub fn receipts_per_charge(&self) -> HashMap<String, usize> {
        let st = self.state.lock().unwrap();
        let mut n: HashMap<String, usize> = st
            .rows
            .iter()
            .map(|r| (r.ev.charge_id.clone(), 0))
            .collect();
        for r in &st.receipts {
            *n.entry(r.charge_id.clone()).or_default() += 1;
        }
        n
    }

    /// (undelivered and not parked, parked).
    pub fn open_and_dead(&self) -> (usize, usize) {
        let st = self.state.lock().unwrap();
        let open = st
            .rows
            .iter()
            .filter(|r| r.delivered_at.is_none() && !r.dead)
            .count();
        (open, st.rows.iter().filter(|r| r.dead).count())
    }

    pub fn processed_ids(&self) -> usize {
        self.state.lock().unwrap().processed.len()
    }
}

#[async_trait]
impl OutboxStorage for Model {
    async fn claim(
        &self,
        worker: &str,
        limit: usize,
        claim_timeout_ms: i64,
    ) -> StoreResult<Vec<Event>> {
        let now = self.now();
        let mut st = self.state.lock().unwrap();
        let mut out = Vec::new();
        for r in st.rows.iter_mut() {
            if out.len() == limit {
                break;
            }
            let free = r.claimed_at.is_none_or(|at| at + claim_timeout_ms <= now);
            if r.delivered_at.is_none() && !r.dead && r.available_at <= now && free {
                r.claimed_by = Some(worker.to_string());
                r.claimed_at = Some(now);
                r.ev.attempts += 1;
                out.push(r.ev.clone());
            }
        }
        Ok(out)
    }

    async fn consume(&self, events: &[Event], max_age_ms: i64) -> StoreResult<Vec<Consumed>> {
        let now = self.now();
        let mut st = self.state.lock().unwrap();
        let mut out = Vec::new();
        for ev in events {
            if expired(ev, now, max_age_ms) {
                out.push(Consumed::Expired);
                continue;
            }
            let duplicates = match (self.dedupe, st.processed.get_mut(&ev.id)) {
                (true, Some(p)) => {
                    p.1 += 1;
                    p.1
                }
                _ => {
                    st.processed.insert(ev.id.clone(), (now, 0));
                    0
                }
            };
            let consumed = Consumed::after_mark(ev, now, duplicates);
            if let Consumed::Written(r) = &consumed {
                st.receipts.push(r.clone());
            }
            out.push(consumed);
        }
        Ok(out)
    }

    async fn ack(&self, event_ids: &[String]) -> StoreResult<()> {
        let now = self.now();
        let mut st = self.state.lock().unwrap();
        for r in st.rows.iter_mut().filter(|r| event_ids.contains(&r.ev.id)) {
            r.delivered_at.get_or_insert(now);
        }
        Ok(())
    }

    async fn release(
        &self,
        event_id: &str,
        worker: &str,
        _error: &str,
        retry_in_ms: i64,
    ) -> StoreResult<()> {
        let now = self.now();
        let mut st = self.state.lock().unwrap();
        for r in st
            .rows
            .iter_mut()
            .filter(|r| r.ev.id == event_id && r.claimed_by.as_deref() == Some(worker))
        {
            r.claimed_by = None;
            r.claimed_at = None;
            r.failures += 1;
            r.available_at = now + retry_in_ms;
        }
        Ok(())
    }

    async fn park(&self, event_id: &str, _reason: &str) -> StoreResult<()> {
        let mut st = self.state.lock().unwrap();
        for r in st
            .rows
            .iter_mut()
            .filter(|r| r.ev.id == event_id && r.delivered_at.is_none())
        {
            r.dead = true;
        }
        Ok(())
    }

    async fn reap(&self, retention_ms: i64) -> StoreResult<usize> {
        let now = self.now();
        let mut st = self.state.lock().unwrap();
        let before = st.processed.len();
        st.processed.retain(|_, (at, _)| *at + retention_ms > now);
        st.rows
            .retain(|r| r.delivered_at.is_none_or(|at| at + retention_ms > now));
        Ok(before - st.processed.len())
    }

    async fn receipts(&self, customer: &str) -> StoreResult<ReceiptsView> {
        let st = self.state.lock().unwrap();
        let events = st
            .rows
            .iter()
            .filter(|r| r.ev.customer == customer)
            .map(|r| EventView {
                id: r.ev.id.clone(),
                kind: CHARGE_SUCCEEDED,
                charge_id: r.ev.charge_id.clone(),
                created_at: r.ev.created_at,
                state: match (r.delivered_at, r.dead) {
                    (Some(_), _) => EventState::Delivered,
                    (None, true) => EventState::Dead,
                    (None, false) => EventState::Pending,
                },
                deliveries: r.ev.attempts,
                failures: r.failures,
                duplicates_skipped: st.processed.get(&r.ev.id).map_or(0, |p| p.1),
                delivered_at: r.delivered_at,
            })
            .collect();
        let receipts = st
            .receipts
            .iter()
            .filter(|r| r.customer == customer)
            .cloned()
            .collect();
        Ok(ReceiptsView { receipts, events })
    }
}
