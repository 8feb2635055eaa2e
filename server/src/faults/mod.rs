//! Fault injection (only with `--faults`): the failures the client must survive,
//! on demand.
//!
//! Faults are scheduled per customer (the `X-Customer-Id` of the scheduling
//! request), so parallel tests and demo visitors never take each other's
//! faults. Each keyed or naive charge request that is about to do work takes
//! the next unit from its customer's queue; replays, 409s and 422s take none.
//! Every unit taken is logged (mode, key, payload fingerprint), so a test can
//! see how many requests reached the server and that they carried one key.

pub mod request;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use self::request::FaultRequest;
use crate::idem::injected::{Canned, ChargeFault, ChargeFaults};
use crate::outbox::faults::{DeliveryFault, DeliveryFaults};

/// What a fault does to the request that takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultMode {
    /// Clears the customer's queue (only as a scheduling request).
    None,
    /// Commit, then close the connection without any response.
    DropAfterCommit,
    /// Commit, then answer 502.
    ErrorAfterCommit,
    /// Answer 503 before anything is stored (and before the provider is called).
    FailBeforeCommit,
    /// Commit, then wait `delay_ms` before answering.
    DelayAfterCommit,
    /// Test-only: abort the whole process after the provider answered and
    /// before phase 3, leaving the key in progress (a request killed between
    /// phases). A supervisor or test restarts the server.
    CrashAfterProvider,
    /// Close the connection without any response before anything is stored
    /// (a network error the client sees; nothing happened).
    DropBeforeCommit,
    /// Answer with exactly the scheduled status, `Retry-After`, body and
    /// `Content-Type` before anything is stored.
    Respond,
    /// Taken by the receipt worker, not a request: the next delivery of an
    /// event of this customer fails before the receipt and is retried.
    WorkerFailBeforeReceipt,
    /// Taken by the receipt worker, not a request: after the receipt of the
    /// next event of this customer commits, the worker dies before its ack.
    WorkerCrashBeforeAck,
}

impl FaultMode {
    /// The receipt worker's fault this mode is, if it is one.
    pub fn delivery(self) -> Option<DeliveryFault> {
        match self {
            FaultMode::WorkerFailBeforeReceipt => Some(DeliveryFault::FailBeforeReceipt),
            FaultMode::WorkerCrashBeforeAck => Some(DeliveryFault::CrashBeforeAck),
            _ => None,
        }
    }
}

/// One unit of a scheduled fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What happens.
    pub mode: FaultMode,
    /// Delay for `delay-after-commit`.
    pub delay_ms: u64,
    /// The answer of `respond`.
    pub respond: Option<Arc<Canned>>,
}

impl Fault {
    /// What this unit does to a charge request; `None` for the modes that
    /// are not a request's.
    pub fn charge_fault(&self) -> Option<ChargeFault> {
        Some(match (self.mode, &self.respond) {
            (FaultMode::FailBeforeCommit, _) => ChargeFault::FailBeforeCommit,
            (FaultMode::DropBeforeCommit, _) => ChargeFault::DropBeforeCommit,
            (FaultMode::Respond, Some(c)) => ChargeFault::Respond(c.clone()),
            (FaultMode::CrashAfterProvider, _) => ChargeFault::CrashAfterProvider,
            (FaultMode::DropAfterCommit, _) => ChargeFault::DropAfterCommit,
            (FaultMode::ErrorAfterCommit, _) => ChargeFault::ErrorAfterCommit,
            (FaultMode::DelayAfterCommit, _) => ChargeFault::DelayAfterCommit(self.delay_ms),
            _ => return None,
        })
    }
}

/// A queue entry: the unit each request takes, and how many are left.
#[derive(Debug, Clone)]
struct Scheduled {
    fault: Fault,
    remaining: u32,
}

impl Scheduled {
    /// `{ mode, remaining, delay_ms }`, plus the fields of a `respond` answer.
    fn to_json(&self) -> Value {
        let f = &self.fault;
        let mut v = json!({ "mode": f.mode, "remaining": self.remaining, "delay_ms": f.delay_ms });
        if let (Some(c), Value::Object(obj)) = (&f.respond, &mut v) {
            if let Ok(Value::Object(extra)) = serde_json::to_value(&**c) {
                obj.extend(extra);
            }
        }
        v
    }
}

/// One unit taken by a request, as `GET /api/faults` shows it.
#[derive(Debug, Clone, Serialize)]
struct Taken {
    mode: FaultMode,
    /// The request's idempotency key (`null` on the naive endpoint).
    key: Option<String>,
    /// The request's payload fingerprint (SHA-256 of its canonical JSON).
    fingerprint: String,
    /// The outbox event a receipt-worker fault struck (absent for requests).
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<String>,
}

/// A customer's queue and the log of units its requests took.
#[derive(Debug, Default)]
struct Slot {
    queue: VecDeque<Scheduled>,
    taken: VecDeque<Taken>,
}

/// Most queue entries (scheduling requests) per customer.
const MAX_QUEUE: usize = 100;
/// Most log entries kept per customer (oldest dropped first).
const MAX_TAKEN: usize = 100;
/// Most customers tracked; beyond it an idle one (empty queue) is forgotten.
const MAX_CUSTOMERS: usize = 1_000;

/// Per-customer fault queues (in memory: a restart clears them).
#[derive(Debug, Default)]
pub struct Faults {
    enabled: bool,
    slots: Mutex<HashMap<String, Slot>>,
}

impl Faults {
    /// A registry; when `enabled` is false, [`Faults::take`] never yields.
    pub fn new(enabled: bool) -> Faults {
        Faults {
            enabled,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// Takes the next fault unit for `customer`, if any, logging it with the
    /// request's key and payload fingerprint. Units for the receipt worker
    /// are left for it.
    pub fn take(&self, customer: &str, key: Option<&str>, fingerprint: &str) -> Option<Fault> {
        self.take_first(
            customer,
            |m| m.delivery().is_none(),
            || Taken {
                mode: FaultMode::None,
                key: key.map(str::to_string),
                fingerprint: fingerprint.to_string(),
                event: None,
            },
        )
    }

    /// Takes the first queued unit whose mode passes `wanted`, logging it as
    /// `log` describes it.
    fn take_first(
        &self,
        customer: &str,
        wanted: impl Fn(FaultMode) -> bool,
        log: impl FnOnce() -> Taken,
    ) -> Option<Fault> {
        if !self.enabled {
            return None;
        }
        let mut slots = self.slots();
        let slot = slots.get_mut(customer)?;
        let at = slot.queue.iter().position(|s| wanted(s.fault.mode))?;
        let entry = &mut slot.queue[at];
        let fault = entry.fault.clone();
        entry.remaining -= 1;
        if entry.remaining == 0 {
            slot.queue.remove(at);
        }
        if slot.taken.len() >= MAX_TAKEN {
            slot.taken.pop_front();
        }
        slot.taken.push_back(Taken {
            mode: fault.mode,
            ..log()
        });
        Some(fault)
    }

    /// Appends `req` to the customer's queue; `None` clears the queue and
    /// the log. Answers with the customer's state, or why the queue is full.
    pub fn schedule(&self, customer: &str, req: Option<FaultRequest>) -> Result<Value, String> {
        let mut slots = self.slots();
        let Some(req) = req else {
            slots.remove(customer);
            return Ok(state(customer, None));
        };
        if !slots.contains_key(customer) && slots.len() >= MAX_CUSTOMERS {
            let idle = slots
                .iter()
                .find(|(_, s)| s.queue.is_empty())
                .map(|(c, _)| c.clone());
            match idle {
                Some(c) => slots.remove(&c),
                None => return Err("too many customers with scheduled faults".into()),
            };
        }
        let slot = slots.entry(customer.to_string()).or_default();
        if slot.queue.len() >= MAX_QUEUE {
            return Err(format!(
                "at most {MAX_QUEUE} scheduled entries per customer; clear them with mode none"
            ));
        }
        slot.queue.push_back(Scheduled {
            fault: Fault {
                mode: req.mode,
                delay_ms: req.delay_ms,
                respond: req.respond,
            },
            remaining: req.count,
        });
        Ok(state(customer, Some(slot)))
    }

    /// `{ customer, scheduled, taken }`: the customer's queue and the units
    /// its requests took.
    pub fn list(&self, customer: &str) -> Value {
        state(customer, self.slots().get(customer))
    }

    /// The queues; a panic while they were held left them whole (every
    /// change is one push or pop), so a poisoned lock is taken as it is.
    fn slots(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ChargeFaults for Faults {
    /// The customer's next unit for requests, as the phases see it.
    fn take(&self, customer: &str, key: Option<&str>, fingerprint: &str) -> Option<ChargeFault> {
        Faults::take(self, customer, key, fingerprint).and_then(|f| f.charge_fault())
    }
}

impl DeliveryFaults for Faults {
    /// The receipt worker takes the customer's next worker-mode unit, one
    /// per delivery of one of the customer's events.
    fn take(&self, customer: &str, event_id: &str) -> Option<DeliveryFault> {
        self.take_first(
            customer,
            |m| m.delivery().is_some(),
            || Taken {
                mode: FaultMode::None,
                key: None,
                fingerprint: String::new(),
                event: Some(event_id.to_string()),
            },
        )
        .and_then(|f| f.mode.delivery())
    }
}

/// `{ customer, scheduled, taken }`.
fn state(customer: &str, slot: Option<&Slot>) -> Value {
    let (scheduled, taken): (Vec<Value>, Vec<&Taken>) = match slot {
        Some(s) => (
            s.queue.iter().map(Scheduled::to_json).collect(),
            s.taken.iter().collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    json!({ "customer": customer, "scheduled": scheduled, "taken": taken })
}

#[cfg(test)]
mod tests;
