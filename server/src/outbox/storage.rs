//! What the relay and the consumer need from a database: a small trait, so
//! the delivery rules are written once and hold on every store.
//!
//! Every time in it is the database's clock, never the worker's: several
//! workers on several hosts agree on when a claim went stale only if one
//! clock decides.

use std::future::Future;
use std::pin::Pin;

use crate::http::problem::ApiResult;
use crate::outbox::event::{Consumed, Event, ReceiptsView};

/// A boxed, sendable future: keeps the trait usable as `dyn OutboxStorage`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The outbox, the processed-events table and the receipts table.
pub trait OutboxStorage: Send + Sync + 'static {
    /// Claims up to `limit` events for `worker`, oldest first: undelivered,
    /// not parked, past their retry time, and either unclaimed or claimed
    /// longer than `claim_timeout_ms` ago (the claimer died). Each claim
    /// counts one delivery attempt. Claims by concurrent workers never
    /// overlap while a claim is fresh.
    fn claim<'a>(
        &'a self,
        worker: &'a str,
        limit: usize,
        claim_timeout_ms: i64,
    ) -> BoxFuture<'a, ApiResult<Vec<Event>>>;

    /// The consumer, in one transaction for the whole slice: for each event,
    /// record its id as processed and write its receipt; an id already
    /// processed writes nothing and counts a skipped duplicate; an event
    /// older than `max_age_ms` is refused ([`Consumed::Expired`]). Answers
    /// in the order of `events`.
    fn consume<'a>(
        &'a self,
        events: &'a [Event],
        max_age_ms: i64,
    ) -> BoxFuture<'a, ApiResult<Vec<Consumed>>>;

    /// The ack: marks the events delivered. Only after their consume
    /// committed; an event acked is never claimed again.
    fn ack<'a>(&'a self, event_ids: &'a [String]) -> BoxFuture<'a, ApiResult<()>>;

    /// Hands a claim back after a failed delivery (if `worker` still holds
    /// it): the event is claimable again `retry_in_ms` from now.
    fn release<'a>(
        &'a self,
        event_id: &'a str,
        worker: &'a str,
        error: &'a str,
        retry_in_ms: i64,
    ) -> BoxFuture<'a, ApiResult<()>>;

    /// Parks an event that may no longer be delivered (its id may be
    /// reaped, so a delivery could not be deduplicated): never claimed again.
    fn park<'a>(&'a self, event_id: &'a str, reason: &'a str) -> BoxFuture<'a, ApiResult<()>>;

    /// Deletes processed ids, and delivered events, older than
    /// `retention_ms`. Returns how many processed ids went.
    fn reap(&self, retention_ms: i64) -> BoxFuture<'_, ApiResult<usize>>;

    /// A customer's receipts and events, oldest first.
    fn receipts<'a>(&'a self, customer: &'a str) -> BoxFuture<'a, ApiResult<ReceiptsView>>;
}
