//! What the relay and the consumer need from a database: a small trait, so
//! the delivery rules are written once and hold on every store.
//!
//! Every time in it is the database's clock, never the worker's: several
//! workers on several hosts agree on when a claim went stale only if one
//! clock decides.

use async_trait::async_trait;

use crate::outbox::event::{Consumed, Event, ReceiptsView};
use crate::store::StoreResult;

/// The outbox, the processed-events table and the receipts table.
#[async_trait]
pub trait OutboxStorage: Send + Sync + 'static {
    /// Claims up to `limit` events for `worker`, oldest first: undelivered,
    /// not parked, past their retry time, and either unclaimed or claimed
    /// longer than `claim_timeout_ms` ago (the claimer died). Each claim
    /// counts one delivery attempt. Claims by concurrent workers never
    /// overlap while a claim is fresh.
    async fn claim(
        &self,
        worker: &str,
        limit: usize,
        claim_timeout_ms: i64,
    ) -> StoreResult<Vec<Event>>;

    /// The consumer, in one transaction for the whole slice: for each event,
    /// record its id as processed and write its receipt; an id already
    /// processed writes nothing and counts a skipped duplicate; an event
    /// older than `max_age_ms` is refused ([`Consumed::Expired`]). Answers
    /// in the order of `events`.
    async fn consume(&self, events: &[Event], max_age_ms: i64) -> StoreResult<Vec<Consumed>>;

    /// The ack: marks the events delivered. Only after their consume
    /// committed; an event acked is never claimed again.
    async fn ack(&self, event_ids: &[String]) -> StoreResult<()>;

    /// Hands a claim back after a failed delivery (if `worker` still holds
    /// it): the event is claimable again `retry_in_ms` from now.
    async fn release(
        &self,
        event_id: &str,
        worker: &str,
        error: &str,
        retry_in_ms: i64,
    ) -> StoreResult<()>;

    /// Parks an event that may no longer be delivered (its id may be
    /// reaped, so a delivery could not be deduplicated): never claimed again.
    async fn park(&self, event_id: &str, reason: &str) -> StoreResult<()>;

    /// Deletes processed ids, and delivered events, older than
    /// `retention_ms`. Returns how many processed ids went.
    async fn reap(&self, retention_ms: i64) -> StoreResult<usize>;

    /// A customer's receipts and events, oldest first.
    async fn receipts(&self, customer: &str) -> StoreResult<ReceiptsView>;
}
