//! The receipt worker: claims undelivered events, hands them to the
//! consumer, and acknowledges them only after the consumer committed.
//!
//! Delivery is at least once. A worker that dies between the consumer's
//! commit and its ack leaves its events claimed; once the claim is older than
//! the claim timeout (database clock) another worker claims them again, the
//! consumer finds their ids processed and skips them, and they are acked.
//! A delivery that fails hands its event back with a growing retry delay.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::ids::new_id;
use crate::outbox::config::OutboxConfig;
use crate::outbox::event::{Consumed, Event};
use crate::outbox::faults::{DeliveryFault, DeliveryFaults};
use crate::outbox::storage::OutboxStorage;
use crate::store::StoreResult;

/// What one tick did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tick {
    /// Events claimed.
    pub claimed: usize,
    /// Receipts written.
    pub written: usize,
    /// Redeliveries skipped by the consumer.
    pub duplicates: usize,
    /// Deliveries that failed and were handed back.
    pub failed: usize,
    /// Events parked as too old.
    pub parked: usize,
}

/// The worker died on purpose (`worker-crash-before-ack`): the receipts of
/// its batch are committed, none of the batch is acked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crashed {
    /// The worker that died.
    pub worker: String,
    /// The event whose fault killed it.
    pub event_id: String,
}

/// One receipt worker: an id (its claims carry it) and its settings.
pub struct Worker {
    id: String,
    storage: Arc<dyn OutboxStorage>,
    faults: Arc<dyn DeliveryFaults>,
    cfg: OutboxConfig,
}

impl Worker {
    /// A worker with a fresh id.
    pub fn new(
        storage: Arc<dyn OutboxStorage>,
        faults: Arc<dyn DeliveryFaults>,
        cfg: OutboxConfig,
    ) -> Worker {
        Worker {
            id: new_id("wk"),
            storage,
            faults,
            cfg,
        }
    }

    /// Its id, as its claims record it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Claims one batch and delivers it.
    pub async fn tick(&self) -> StoreResult<Result<Tick, Crashed>> {
        let claim_ms = OutboxConfig::ms(self.cfg.claim_timeout);
        let events = self
            .storage
            .claim(&self.id, self.cfg.batch, claim_ms)
            .await?;
        let mut tick = Tick {
            claimed: events.len(),
            ..Tick::default()
        };
        let mut deliver: Vec<Event> = Vec::with_capacity(events.len());
        let mut crash = None;
        for ev in events {
            match self.faults.take(&ev.customer, &ev.id) {
                Some(DeliveryFault::FailBeforeReceipt) => {
                    tracing::warn!(worker = self.id, event = ev.id, attempt = ev.attempts,
                        "fault worker-fail-before-receipt: the delivery fails; the event is retried");
                    self.hand_back(&ev, "injected fault worker-fail-before-receipt")
                        .await;
                    tick.failed += 1;
                }
                Some(DeliveryFault::CrashBeforeAck) => {
                    crash.get_or_insert_with(|| ev.id.clone());
                    deliver.push(ev);
                }
                None => deliver.push(ev),
            }
        }
        if deliver.is_empty() {
            return Ok(Ok(tick));
        }
        if !self.cfg.mailer_latency.is_zero() {
            tokio::time::sleep(self.cfg.mailer_latency * deliver.len() as u32).await;
        }
        let window_ms = OutboxConfig::ms(self.cfg.window());
        let outcomes = match self.storage.consume(&deliver, window_ms).await {
            Ok(o) => o,
            Err(e) => {
                tracing::warn!(worker = self.id, error = %e, "the consumer failed; the batch is retried");
                for ev in &deliver {
                    self.hand_back(ev, "the consumer's transaction failed")
                        .await;
                }
                tick.failed += deliver.len();
                return Ok(Ok(tick));
            }
        };
        let mut acks = Vec::with_capacity(deliver.len());
        for (ev, outcome) in deliver.iter().zip(outcomes) {
            match outcome {
                Consumed::Written(r) => {
                    tracing::info!(
                        worker = self.id,
                        event = ev.id,
                        receipt = r.id,
                        attempt = ev.attempts,
                        "receipt sent"
                    );
                    tick.written += 1;
                    acks.push(ev.id.clone());
                }
                Consumed::Duplicate => {
                    tracing::info!(
                        worker = self.id,
                        event = ev.id,
                        attempt = ev.attempts,
                        "redelivery skipped: the consumer already processed this event"
                    );
                    tick.duplicates += 1;
                    acks.push(ev.id.clone());
                }
                Consumed::Expired => {
                    tracing::error!(worker = self.id, event = ev.id, charge = ev.charge_id,
                        "event older than the redelivery window: parked, no receipt; an operator must look");
                    if let Err(e) = self
                        .storage
                        .park(&ev.id, "older than the redelivery window")
                        .await
                    {
                        tracing::warn!(event = ev.id, error = %e, "cannot park the event; it is refused again later");
                    }
                    tick.parked += 1;
                }
            }
        }
        if let Some(event_id) = crash {
            tracing::error!(worker = self.id, event = event_id,
                "fault worker-crash-before-ack: the receipts are committed, the worker dies before its ack");
            return Ok(Err(Crashed {
                worker: self.id.clone(),
                event_id,
            }));
        }
        if let Err(e) = self.storage.ack(&acks).await {
            // Not lost: the claims go stale and the events are redelivered,
            // then skipped by the consumer.
            tracing::warn!(worker = self.id, error = %e, "ack failed; the events are redelivered after the claim timeout");
        }
        Ok(Ok(tick))
    }

    /// Hands a failed event back with the retry delay of its attempt.
    async fn hand_back(&self, ev: &Event, why: &str) {
        let delay = OutboxConfig::ms(self.cfg.retry_delay(ev.attempts));
        if let Err(e) = self.storage.release(&ev.id, &self.id, why, delay).await {
            tracing::warn!(event = ev.id, error = %e, "cannot hand the event back; it is reclaimed after the claim timeout");
        }
    }

    /// Delivers until it crashes on purpose (a fault); storage errors are
    /// logged and retried. Also reaps old processed ids now and then.
    pub async fn run(&self) -> Crashed {
        let retention_ms = OutboxConfig::ms(self.cfg.retention);
        let mut next_reap = Instant::now();
        loop {
            if Instant::now() >= next_reap {
                match self.storage.reap(retention_ms).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(
                        worker = self.id,
                        reaped = n,
                        "old processed event ids reaped"
                    ),
                    Err(e) => {
                        tracing::warn!(worker = self.id, error = %e, "reaping processed ids failed; will retry")
                    }
                }
                next_reap = Instant::now() + self.cfg.reap_period();
            }
            match self.tick().await {
                Ok(Ok(t)) if t.claimed > 0 => continue,
                Ok(Ok(_)) => {}
                Ok(Err(crashed)) => return crashed,
                Err(e) => {
                    tracing::warn!(worker = self.id, error = %e, "claiming events failed; will retry")
                }
            }
            tokio::time::sleep(self.cfg.poll).await;
        }
    }
}

/// Pause before the in-process worker starts again after a crash.
const RESTART_DELAY: Duration = Duration::from_millis(100);

/// The in-process worker, forever. A crash (the `worker-crash-before-ack`
/// fault) ends the worker as a killed process would end: its claims stay
/// with its id, unacked; a new worker with a new id starts, and may take
/// those events only once their claims are older than the claim timeout.
pub async fn supervise(
    storage: Arc<dyn OutboxStorage>,
    faults: Arc<dyn DeliveryFaults>,
    cfg: OutboxConfig,
) {
    loop {
        let worker = Worker::new(storage.clone(), faults.clone(), cfg.clone());
        tracing::info!(worker = worker.id(), "receipt worker started in process");
        let crashed = worker.run().await;
        tracing::warn!(worker = crashed.worker, event = crashed.event_id,
            "in-process receipt worker crashed before its ack; a new one starts, the batch is redelivered after the claim timeout");
        tokio::time::sleep(RESTART_DELAY).await;
    }
}
