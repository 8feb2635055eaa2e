//! After the charge, exactly one receipt: a transactional outbox and an
//! idempotent consumer.
//!
//! Phase 3 writes a `charge.succeeded` event into the outbox in the charge's
//! own transaction, so an event exists exactly when its charge does. The
//! receipt worker ([`relay`]) claims undelivered events and hands them to the
//! consumer, which writes the receipt (the mailer stand-in) and the event id
//! into the processed-events table in one transaction; an id it has seen is
//! skipped. Only then is the event acknowledged. Delivery is at least once,
//! the receipt exactly once. The rules are written against [`OutboxStorage`],
//! which each store implements in its own SQL.

pub mod config;
pub mod event;
pub mod faults;
pub mod relay;
pub mod storage;

#[cfg(test)]
pub mod contract;
#[cfg(test)]
mod model;
#[cfg(test)]
mod model_tests;
