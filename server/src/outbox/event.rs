//! What the outbox carries and what the receipt consumer produces.
//!
//! An [`Event`] is written by phase 3, in the charge's own transaction; a
//! [`Receipt`] is the mailer stand-in's record of one e-mail sent. The views
//! are what `GET /api/receipts` shows of both.

use serde::Serialize;

use crate::ids::new_id;
use crate::store::model::Charge;

/// The only event type so far: a charge committed.
pub const CHARGE_SUCCEEDED: &str = "charge.succeeded";

/// A `charge.succeeded` event as phase 3 inserts it. Its time is set by the
/// database's clock at insert, the clock every redelivery rule is measured on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    /// `evt_…`, the id the consumer deduplicates on.
    pub id: String,
    /// Customer scope of the charge.
    pub customer: String,
    /// The charge this event announces (one event per charge).
    pub charge_id: String,
    /// Minor units charged.
    pub amount: u64,
    /// Currency charged.
    pub currency: String,
}

impl NewEvent {
    /// The event announcing `charge`, with a fresh id.
    pub fn for_charge(charge: &Charge) -> NewEvent {
        NewEvent {
            id: new_id("evt"),
            customer: charge.customer.clone(),
            charge_id: charge.id.clone(),
            amount: charge.amount,
            currency: charge.currency.clone(),
        }
    }
}

/// An event as a worker claimed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `evt_…`.
    pub id: String,
    /// Customer scope.
    pub customer: String,
    /// The charge it announces.
    pub charge_id: String,
    /// Minor units charged.
    pub amount: u64,
    /// Currency charged.
    pub currency: String,
    /// Inserted at, ms since the epoch on the database's clock.
    pub created_at: i64,
    /// Claims so far, this one included (1 on the first delivery).
    pub attempts: i64,
}

/// A receipt "e-mailed" by the mailer stand-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// `rcpt_…`.
    pub id: String,
    /// Always `"receipt"`.
    pub object: &'static str,
    /// The event it answers.
    pub event_id: String,
    /// The charge it is for.
    pub charge_id: String,
    /// Customer scope.
    pub customer: String,
    /// Minor units.
    pub amount: u64,
    /// Currency.
    pub currency: String,
    /// Written at, ms since the epoch (database clock).
    pub created_at: i64,
}

impl Receipt {
    /// The receipt the consumer writes for `ev`, with a fresh id.
    pub fn for_event(ev: &Event, created_at: i64) -> Receipt {
        Receipt {
            id: new_id("rcpt"),
            object: "receipt",
            event_id: ev.id.clone(),
            charge_id: ev.charge_id.clone(),
            customer: ev.customer.clone(),
            amount: ev.amount,
            currency: ev.currency.clone(),
            created_at,
        }
    }
}

/// The consumer's rule for one event, in two steps around the store's
/// mark of its id: an event older than the redelivery window is refused
/// before anything is written ([`expired`]); otherwise its id is marked
/// processed, and the receipt is written only on the first mark
/// ([`Consumed::after_mark`]).
pub fn expired(ev: &Event, now: i64, max_age_ms: i64) -> bool {
    ev.created_at + max_age_ms <= now
}

impl Consumed {
    /// What consuming `ev` comes to once its id was marked at `now`, seen
    /// `duplicates` times before: the receipt to write with the mark on the
    /// first, nothing after.
    pub fn after_mark(ev: &Event, now: i64, duplicates: i64) -> Consumed {
        if duplicates > 0 {
            Consumed::Duplicate
        } else {
            Consumed::Written(Receipt::for_event(ev, now))
        }
    }
}

/// Where an event stands, as `GET /api/receipts` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventState {
    /// Not acknowledged yet: waiting, claimed, or waiting for a retry.
    Pending,
    /// Acknowledged: the consumer has it.
    Delivered,
    /// Parked: older than the redelivery window, never delivered again.
    Dead,
}

impl EventState {
    /// The state of an event acked at `delivered_at` and parked at `dead_at`.
    pub fn of(delivered_at: Option<i64>, dead_at: Option<i64>) -> EventState {
        match (delivered_at, dead_at) {
            (Some(_), _) => EventState::Delivered,
            (None, Some(_)) => EventState::Dead,
            (None, None) => EventState::Pending,
        }
    }
}

/// An outbox event and its delivery history, for the API and the demo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventView {
    /// `evt_…`.
    pub id: String,
    /// `charge.succeeded`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The charge it announces.
    pub charge_id: String,
    /// Inserted at (ms, database clock).
    pub created_at: i64,
    /// Pending, delivered or dead.
    pub state: EventState,
    /// Times a worker claimed it (each claim is one delivery attempt).
    pub deliveries: i64,
    /// Deliveries that failed before a receipt was written.
    pub failures: i64,
    /// Redeliveries the consumer skipped because it had seen the id.
    pub duplicates_skipped: i64,
    /// Acknowledged at (ms, database clock).
    pub delivered_at: Option<i64>,
}

/// A customer's receipts and the events behind them, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReceiptsView {
    /// Receipts written.
    pub receipts: Vec<Receipt>,
    /// Events in the outbox.
    pub events: Vec<EventView>,
}

/// What the consumer did with one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Consumed {
    /// First sight of this id: the receipt and the id committed together.
    Written(Receipt),
    /// The id was already processed: nothing written (a redelivery).
    Duplicate,
    /// Older than the redelivery window: its id may already be reaped, so
    /// it cannot be deduplicated and is refused.
    Expired,
}
