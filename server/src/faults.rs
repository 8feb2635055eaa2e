//! Fault injection (only with `--faults`): the failures the client must survive,
//! on demand.
//!
//! Faults are scheduled per customer (the `X-Customer-Id` of the scheduling
//! request), so parallel tests and demo visitors never take each other's
//! faults. Each keyed or naive charge request that is about to do work takes
//! the next unit from its customer's queue; replays, 409s and 422s take none.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::app::AppState;
use crate::key;
use crate::problem::{ApiError, ApiResult};
use crate::request::read_json;

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
}

/// One unit of a scheduled fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// What happens.
    pub mode: FaultMode,
    /// Delay for `delay-after-commit`.
    pub delay_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
struct Scheduled {
    mode: FaultMode,
    remaining: u32,
    delay_ms: u64,
}

/// Default delay of `delay-after-commit`.
const DEFAULT_DELAY_MS: u64 = 1_000;
const MAX_DELAY_MS: u64 = 120_000;
const MAX_COUNT: u64 = 10_000;

/// Per-customer fault queues (in memory: a restart clears them).
#[derive(Debug, Default)]
pub struct Faults {
    enabled: bool,
    queues: Mutex<HashMap<String, VecDeque<Scheduled>>>,
}

impl Faults {
    /// A registry; when `enabled` is false, [`Faults::take`] never yields.
    pub fn new(enabled: bool) -> Faults {
        Faults {
            enabled,
            queues: Mutex::new(HashMap::new()),
        }
    }

    /// Takes the next fault unit for `customer`, if any.
    pub fn take(&self, customer: &str) -> Option<Fault> {
        if !self.enabled {
            return None;
        }
        let mut queues = self.queues.lock().ok()?;
        let queue = queues.get_mut(customer)?;
        let front = queue.front_mut()?;
        let fault = Fault {
            mode: front.mode,
            delay_ms: front.delay_ms,
        };
        front.remaining -= 1;
        if front.remaining == 0 {
            queue.pop_front();
        }
        if queue.is_empty() {
            queues.remove(customer);
        }
        Some(fault)
    }

    fn schedule(&self, customer: &str, s: Option<Scheduled>) -> Vec<Scheduled> {
        let Ok(mut queues) = self.queues.lock() else {
            return Vec::new();
        };
        match s {
            None => {
                queues.remove(customer);
            }
            Some(s) => queues.entry(customer.to_string()).or_default().push_back(s),
        }
        self.list_locked(&queues, customer)
    }

    fn list(&self, customer: &str) -> Vec<Scheduled> {
        self.queues
            .lock()
            .map(|q| self.list_locked(&q, customer))
            .unwrap_or_default()
    }

    fn list_locked(
        &self,
        queues: &HashMap<String, VecDeque<Scheduled>>,
        customer: &str,
    ) -> Vec<Scheduled> {
        queues
            .get(customer)
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default()
    }
}

fn parse_request(v: Value) -> ApiResult<Option<Scheduled>> {
    let bad = |m: &str| ApiError::InvalidBody(m.to_string());
    let obj = v
        .as_object()
        .ok_or_else(|| bad("the body must be a JSON object"))?;
    let mode: FaultMode = obj
        .get("mode")
        .cloned()
        .and_then(|m| serde_json::from_value(m).ok())
        .ok_or_else(|| {
            bad("`mode` must be one of none, drop-after-commit, error-after-commit, fail-before-commit, delay-after-commit, crash-after-provider")
        })?;
    let count = match obj.get("count") {
        None => 1,
        Some(c) => c
            .as_u64()
            .filter(|n| (1..=MAX_COUNT).contains(n))
            .ok_or_else(|| bad("`count` must be an integer from 1 to 10000"))?,
    };
    let delay_ms = match obj.get("delay_ms") {
        None => DEFAULT_DELAY_MS,
        Some(d) => d
            .as_u64()
            .filter(|n| *n <= MAX_DELAY_MS)
            .ok_or_else(|| bad("`delay_ms` must be an integer from 0 to 120000"))?,
    };
    Ok(match mode {
        FaultMode::None => None,
        mode => Some(Scheduled {
            mode,
            remaining: count as u32,
            delay_ms,
        }),
    })
}

/// `POST /api/faults {mode, count?=1, delay_ms?=1000}`: appends to the
/// customer's queue (`none` clears it); answers with the queue.
pub async fn schedule(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let req = parse_request(read_json(&headers, body).await?)?;
    let scheduled = st.faults.schedule(&customer, req);
    tracing::info!(customer, ?scheduled, "faults scheduled");
    Ok(Json(
        json!({ "customer": customer, "scheduled": scheduled }),
    ))
}

/// `GET /api/faults`: the customer's queue.
pub async fn list(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let scheduled = st.faults.list(&customer);
    Ok(Json(
        json!({ "customer": customer, "scheduled": scheduled }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_are_per_customer_and_counted() {
        let f = Faults::new(true);
        f.schedule(
            "a",
            parse_request(json!({"mode": "error-after-commit", "count": 2})).unwrap(),
        );
        f.schedule(
            "a",
            parse_request(json!({"mode": "delay-after-commit", "delay_ms": 5})).unwrap(),
        );
        assert_eq!(f.take("b"), None);
        assert_eq!(f.take("a").unwrap().mode, FaultMode::ErrorAfterCommit);
        assert_eq!(f.take("a").unwrap().mode, FaultMode::ErrorAfterCommit);
        assert_eq!(
            f.take("a"),
            Some(Fault {
                mode: FaultMode::DelayAfterCommit,
                delay_ms: 5
            })
        );
        assert_eq!(f.take("a"), None);
        f.schedule(
            "a",
            parse_request(json!({"mode": "drop-after-commit"})).unwrap(),
        );
        f.schedule("a", parse_request(json!({"mode": "none"})).unwrap());
        assert_eq!(f.take("a"), None);
    }

    #[test]
    fn disabled_registry_never_yields() {
        let f = Faults::new(false);
        f.schedule(
            "a",
            parse_request(json!({"mode": "drop-after-commit"})).unwrap(),
        );
        assert_eq!(f.take("a"), None);
    }

    #[test]
    fn bad_requests() {
        for v in [
            json!({}),
            json!({"mode": "explode"}),
            json!({"mode": "drop-after-commit", "count": 0}),
            json!({"mode": "delay-after-commit", "delay_ms": -1}),
            json!([]),
        ] {
            assert!(parse_request(v).is_err());
        }
    }
}
