//! The submit flow: lock the scope, re-read the record, follow core's plan, then the
//! retry loop (core::retry) with the record written before every try.

use std::rc::Rc;

use js_sys::JSON;
use wasm_bindgen::JsValue;

use super::checkout::Inner;
use super::clock::{now_ms, random01, sleep};
use super::events::Event;
use super::http::{self, Answer, NoAnswer};
use super::js::{error_text, Obj};
use super::lock;
use crate::core::fingerprint::fingerprint;
use crate::core::header::{format_key, is_replayed};
use crate::core::record::{lease_key, Record, StoredResponse};
use crate::core::retry::{classify, Class, Next, TryOutcome};
use crate::core::retry_after::parse_retry_after;
use crate::core::state::{plan_submit_since, State, SubmitPlan};
use crate::error::{Error, Result};

/// A lock that took longer than this was held by someone else.
const WAITED_MS: f64 = 15.0;
/// How long a tab that waited lets the holder's storage writes arrive.
const SETTLE_MS: f64 = 50.0;

/// The payload as JSON text and its fingerprint; `invalid-payload` when JSON cannot carry it.
pub(crate) fn prepare(payload: &JsValue) -> Result<(String, String)> {
    let body = match JSON::stringify(payload) {
        Ok(s) => s.as_string(),
        Err(e) => return Err(Error::InvalidPayload(error_text(&e))),
    };
    let body = body.ok_or_else(|| Error::InvalidPayload("undefined or a function".into()))?;
    let fp = fingerprint(&body)?;
    Ok((body, fp))
}

/// `{ key, status, ok, body, replayed, fromCache, attempts }`; the body parsed as JSON,
/// else the text, `null` when empty.
fn result(key: &str, r: &StoredResponse, from_cache: bool, attempts: u32) -> JsValue {
    let body = if r.body.is_empty() {
        JsValue::NULL
    } else {
        JSON::parse(&r.body).unwrap_or_else(|_| JsValue::from_str(&r.body))
    };
    Obj::new()
        .set("key", key)
        .set("status", r.status)
        .set("ok", (200..300).contains(&r.status))
        .set("body", body)
        .set("replayed", r.replayed)
        .set("fromCache", from_cache)
        .set("attempts", attempts)
        .done()
}

/// The stored result, if `rec` holds one.
fn cached(rec: &Record) -> Option<JsValue> {
    rec.response
        .as_ref()
        .map(|r| result(&rec.key, r, true, rec.attempts))
}

/// Runs one submit sequence; `started` is when `submit()` was called.
pub(crate) async fn run(
    inner: Rc<Inner>,
    body: String,
    fp: String,
    started: f64,
) -> Result<JsValue> {
    let o = &inner.opts;
    let mut lock_name = String::from("idemkey:");
    lock_name.push_str(&inner.rec_key);
    let asked = now_ms();
    // Held until this function returns (dropping it releases the scope).
    let _guard = lock::acquire(&inner.store, &lock_name, &lease_key(&o.namespace, &o.scope)).await;
    if now_ms() - asked > WAITED_MS {
        // Another tab held the scope. Chromium hands its storage writes to this tab apart
        // from the lock's release; give them a moment to land before reading its result.
        sleep(SETTLE_MS).await;
    }
    let mut rec = inner.reload();
    let now = now_ms();
    // Includes "another tab failed this very payload while we waited: its answer is ours".
    match plan_submit_since(&rec, &fp, now, started) {
        SubmitPlan::Cached => {
            if let Some(r) = cached(&rec) {
                return Ok(r);
            }
        }
        SubmitPlan::Conflict => {
            return Err(Error::PayloadConflict {
                state: rec.state.as_str(),
            })
        }
        SubmitPlan::Send { new_key: true } => {
            let prev = rec.state;
            rec = inner.fresh();
            inner.replace(&rec);
            inner.state_changed(&rec, prev);
        }
        SubmitPlan::Send { new_key: false } => {}
    }
    let prev = rec.state;
    rec.fingerprint = Some(fp);
    rec.state = State::Pending;
    rec.updated_at = now;
    // Stored with the first try's count just below, before the first byte goes out: a
    // write here would be replaced by that one before this submit yields.
    inner.rec.replace(rec.clone());
    inner.state_changed(&rec, prev);

    let policy = o.retry_policy();
    let t0 = now_ms();
    let key_value = format_key(&rec.key, o.header_format);
    let mut retries = 0;
    loop {
        rec.attempts += 1;
        rec.updated_at = now_ms();
        // The count is stored before the try leaves. A write refused because the checkout
        // moved to another key (reset(), finish(), another tab) while we slept means the
        // attempt was abandoned: sending on would re-send a key the page gave up on, and
        // hold the scope's lock so the new attempt's submit waits behind our retries.
        if !inner.persist(&rec) {
            return Err(Error::OutcomeUnknown {
                attempts: rec.attempts - 1,
                reason: "abandoned".into(),
                abandoned: true,
            });
        }
        inner.events.emit(
            &rec.key,
            Event::Attempt {
                attempt: rec.attempts,
            },
        );
        let left = o.deadline_ms as f64 - (now_ms() - t0);
        let t = http::Try {
            url: &o.endpoint,
            method: &o.method,
            headers: &o.headers,
            key_name: &o.header_name,
            key_value: &key_value,
            body: &body,
            credentials: &o.credentials,
            timeout_ms: (o.timeout_ms as f64).min(left).max(1.0),
        };
        let (outcome, retry_after) = match http::send(&t).await {
            Ok(Answer {
                status,
                body,
                retry_after,
                replayed,
            }) => {
                let replayed = is_replayed(replayed.as_deref());
                inner.events.emit(
                    &rec.key,
                    Event::Response {
                        attempt: rec.attempts,
                        status,
                        replayed,
                    },
                );
                let done = match classify(status) {
                    Class::Success => Some(State::Succeeded),
                    Class::Failure => Some(State::Failed),
                    Class::Retry => None,
                };
                if let Some(state) = done {
                    let prev = rec.state;
                    rec.state = state;
                    rec.updated_at = now_ms();
                    let r = StoredResponse {
                        status,
                        body,
                        replayed,
                    };
                    let out = result(&rec.key, &r, false, rec.attempts);
                    rec.response = Some(r);
                    inner.persist(&rec);
                    inner.state_changed(&rec, prev);
                    return Ok(out);
                }
                (
                    TryOutcome::Response(status),
                    retry_after.and_then(|v| parse_retry_after(&v, now_ms())),
                )
            }
            Err(NoAnswer::Network) => (TryOutcome::NetworkError, None),
            Err(NoAnswer::Timeout) => (TryOutcome::Timeout, None),
        };
        let reason = outcome.reason();
        match policy.next(retries, now_ms() - t0, retry_after, random01()) {
            Next::Retry { delay_ms } => {
                inner.events.emit(
                    &rec.key,
                    Event::Retry {
                        attempt: rec.attempts,
                        delay_ms,
                        reason: &reason,
                    },
                );
                sleep(delay_ms as f64).await;
                retries += 1;
            }
            Next::GiveUp => {
                return Err(Error::OutcomeUnknown {
                    attempts: rec.attempts,
                    reason,
                    abandoned: false,
                })
            }
        }
    }
}
