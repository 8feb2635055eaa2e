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

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use self::request::{self as fault_request, Canned, FaultRequest};
use crate::http::body::read_json;
use crate::http::headers as key;
use crate::http::problem::{ApiError, ApiResult};
use crate::http::routes::AppState;
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
    /// The answer of a fault that acts before anything is stored
    /// (`fail-before-commit`, `drop-before-commit`, `respond`); `None` for
    /// the others, which let the request do its work.
    pub fn before_commit(&self) -> Option<ApiError> {
        match (self.mode, &self.respond) {
            (FaultMode::FailBeforeCommit, _) => Some(ApiError::FaultBeforeCommit),
            (FaultMode::DropBeforeCommit, _) => Some(ApiError::FaultDropBeforeCommit),
            (FaultMode::Respond, Some(c)) => Some(ApiError::FaultRespond(c.clone())),
            _ => None,
        }
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
        let mut slots = self.slots().ok()?;
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
    /// the log. Answers with the customer's state.
    fn schedule(&self, customer: &str, req: Option<FaultRequest>) -> ApiResult<Value> {
        let mut slots = self.slots()?;
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
                None => {
                    return Err(ApiError::InvalidBody(
                        "too many customers with scheduled faults".into(),
                    ))
                }
            };
        }
        let slot = slots.entry(customer.to_string()).or_default();
        if slot.queue.len() >= MAX_QUEUE {
            return Err(ApiError::InvalidBody(format!(
                "at most {MAX_QUEUE} scheduled entries per customer; clear them with mode none"
            )));
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

    fn list(&self, customer: &str) -> ApiResult<Value> {
        Ok(state(customer, self.slots()?.get(customer)))
    }

    fn slots(&self) -> ApiResult<MutexGuard<'_, HashMap<String, Slot>>> {
        self.slots
            .lock()
            .map_err(|_| ApiError::Internal("fault registry poisoned".into()))
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

/// `POST /api/faults {mode, count?=1, delay_ms?=1000, status?, retry_after?,
/// body?, content_type?}`: appends to the customer's queue (`none` clears
/// it); answers like `GET /api/faults`.
pub async fn schedule(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let req = fault_request::parse(read_json(&headers, body).await?)?;
    tracing::info!(customer, ?req, "faults scheduled");
    Ok(Json(st.faults.schedule(&customer, req)?))
}

/// `GET /api/faults`: the customer's queue and the units its requests took.
pub async fn list(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    Ok(Json(st.faults.list(&customer)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(f: &Faults, customer: &str, v: Value) {
        f.schedule(customer, fault_request::parse(v).unwrap())
            .unwrap();
    }

    fn mode(f: Option<Fault>) -> Option<FaultMode> {
        f.map(|f| f.mode)
    }

    #[test]
    fn queues_are_per_customer_and_counted() {
        let f = Faults::new(true);
        sched(&f, "a", json!({"mode": "error-after-commit", "count": 2}));
        sched(
            &f,
            "a",
            json!({"mode": "delay-after-commit", "delay_ms": 5}),
        );
        assert_eq!(f.take("b", None, "fp"), None);
        assert_eq!(
            mode(f.take("a", Some("k1"), "fp")),
            Some(FaultMode::ErrorAfterCommit)
        );
        assert_eq!(
            mode(f.take("a", Some("k1"), "fp")),
            Some(FaultMode::ErrorAfterCommit)
        );
        assert_eq!(
            f.take("a", None, "fp2"),
            Some(Fault {
                mode: FaultMode::DelayAfterCommit,
                delay_ms: 5,
                respond: None,
            })
        );
        assert_eq!(f.take("a", Some("k1"), "fp"), None);
        let listed = f.list("a").unwrap();
        assert_eq!(listed["scheduled"], json!([]));
        assert_eq!(
            listed["taken"],
            json!([
                {"mode": "error-after-commit", "key": "k1", "fingerprint": "fp"},
                {"mode": "error-after-commit", "key": "k1", "fingerprint": "fp"},
                {"mode": "delay-after-commit", "key": null, "fingerprint": "fp2"},
            ])
        );
        sched(&f, "a", json!({"mode": "drop-after-commit"}));
        f.schedule("a", None).unwrap();
        assert_eq!(f.take("a", None, "fp"), None);
        assert_eq!(
            f.list("a").unwrap()["taken"],
            json!([]),
            "none clears the log too"
        );
    }

    #[test]
    fn respond_and_drop_before_commit_refuse_before_work() {
        let f = Faults::new(true);
        sched(
            &f,
            "a",
            json!({"mode": "respond", "status": 429, "retry_after": "1"}),
        );
        sched(&f, "a", json!({"mode": "drop-before-commit"}));
        sched(&f, "a", json!({"mode": "delay-after-commit"}));
        let shown = &f.list("a").unwrap()["scheduled"][0];
        assert_eq!(
            *shown,
            json!({"mode": "respond", "remaining": 1, "delay_ms": 1000, "status": 429, "retry_after": "1", "body": ""})
        );
        match f.take("a", None, "fp").unwrap().before_commit() {
            Some(ApiError::FaultRespond(c)) => {
                assert_eq!((c.status, c.retry_after.as_deref()), (429, Some("1")))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            f.take("a", None, "fp").unwrap().before_commit(),
            Some(ApiError::FaultDropBeforeCommit)
        ));
        assert!(f.take("a", None, "fp").unwrap().before_commit().is_none());
    }

    #[test]
    fn worker_units_are_left_to_the_worker_and_request_units_to_requests() {
        let f = Faults::new(true);
        sched(&f, "a", json!({"mode": "worker-crash-before-ack"}));
        sched(&f, "a", json!({"mode": "error-after-commit"}));
        sched(
            &f,
            "a",
            json!({"mode": "worker-fail-before-receipt", "count": 2}),
        );
        assert_eq!(
            mode(f.take("a", Some("k"), "fp")),
            Some(FaultMode::ErrorAfterCommit),
            "a request skips the worker's units"
        );
        assert_eq!(f.take("a", Some("k"), "fp"), None);
        let worker: &dyn DeliveryFaults = &f;
        assert_eq!(worker.take("b", "evt_0"), None, "per customer");
        assert_eq!(
            worker.take("a", "evt_1"),
            Some(DeliveryFault::CrashBeforeAck)
        );
        assert_eq!(
            worker.take("a", "evt_1"),
            Some(DeliveryFault::FailBeforeReceipt)
        );
        assert_eq!(
            worker.take("a", "evt_2"),
            Some(DeliveryFault::FailBeforeReceipt)
        );
        assert_eq!(worker.take("a", "evt_2"), None);
        assert_eq!(
            f.list("a").unwrap()["taken"],
            json!([
                {"mode": "error-after-commit", "key": "k", "fingerprint": "fp"},
                {"mode": "worker-crash-before-ack", "key": null, "fingerprint": "", "event": "evt_1"},
                {"mode": "worker-fail-before-receipt", "key": null, "fingerprint": "", "event": "evt_1"},
                {"mode": "worker-fail-before-receipt", "key": null, "fingerprint": "", "event": "evt_2"},
            ])
        );
        let off = Faults::new(false);
        sched(&off, "a", json!({"mode": "worker-crash-before-ack"}));
        assert_eq!(DeliveryFaults::take(&off, "a", "evt_1"), None);
    }

    #[test]
    fn disabled_registry_never_yields() {
        let f = Faults::new(false);
        sched(&f, "a", json!({"mode": "drop-after-commit"}));
        assert_eq!(f.take("a", None, "fp"), None);
    }

    #[test]
    fn queues_and_logs_are_bounded() {
        let f = Faults::new(true);
        for _ in 0..MAX_QUEUE {
            sched(&f, "a", json!({"mode": "error-after-commit"}));
        }
        let more = fault_request::parse(json!({"mode": "error-after-commit"})).unwrap();
        assert!(f.schedule("a", more).is_err());
        for _ in 0..MAX_QUEUE {
            f.take("a", None, "fp").unwrap();
        }
        sched(&f, "a", json!({"mode": "error-after-commit", "count": 10}));
        for _ in 0..10 {
            f.take("a", None, "fp").unwrap();
        }
        assert_eq!(
            f.list("a").unwrap()["taken"].as_array().unwrap().len(),
            MAX_TAKEN
        );
    }
}
