//! The submit flow: lock the scope, read its record, follow core's plan, then the retry
//! loop (core::retry) with the record stored before every try, and the final answer stored.

use crate::prelude::*;
use alloc::rc::Rc;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::checkout::Inner;
use super::clock::{now_ms, random01, sleep};
use super::events::Event;
use super::flight::Flight;
use super::http::{self, Answer, NoAnswer};
use super::js;
use super::task::JsFuture;
use crate::core::fingerprint::fingerprint_canonical;
use crate::core::header::{format_key, is_replayed};
use crate::core::options::{Options, StorageKind};
use crate::core::record::{Record, StoredResponse};
use crate::core::retry::{classify, Class, Next, TryOutcome};
use crate::core::retry_after::parse_retry_after_with;
use crate::core::state::{plan_submit_since, State, SubmitPlan};
use crate::core::sync::Notice;
use crate::error::{Error, Result};

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// `[JSON.stringify(v), its canonical form]` (the core's `Json::write_canonical` of
    /// it, written by the browser), or `[why]` when JSON cannot carry `v`.
    #[wasm_bindgen(js_name = toJson)]
    fn to_json(v: &JsValue) -> Array;
}

/// The payload as JSON text and its fingerprint; `invalid-payload` when JSON cannot carry it.
pub(crate) fn prepare(payload: &JsValue) -> Result<(String, String)> {
    let v = to_json(payload);
    let item = |i| js::text(&v.get(i)).unwrap_or_default();
    if v.length() == 1 {
        return Err(Error::InvalidPayload(item(0)));
    }
    Ok((item(0), fingerprint_canonical(&item(1))))
}

/// `{ key, status, ok, body, replayed, fromCache, attempts }`; the body parsed as JSON,
/// else the text, `null` when empty.
fn result(key: &str, r: &StoredResponse, from_cache: bool, attempts: u32) -> JsValue {
    js::result(key, r.status, &r.body, r.replayed, from_cache, attempts)
}

/// The stored result, if `rec` holds one.
pub(crate) fn cached(rec: &Record) -> Option<JsValue> {
    rec.response
        .as_ref()
        .map(|r| result(&rec.key, r, true, rec.attempts))
}

/// Runs one submit sequence of this tab with the options of the `Checkout` it was called
/// on, `started` when `submit()` was called: lock the
/// scope, read its record, plan, send the tries (each stored before it leaves), store the
/// final answer; the lock is released once IndexedDB has that answer (which the submit
/// does not wait for when localStorage holds the copy).
///
/// The tries go on until a final answer; `outcome-unknown` when retries or the deadline
/// run out, or when the key was given up (`reset()`, `finish()`, another tab) before a
/// try: sending on would re-send a key the page gave up on, and hold the scope's lock so
/// the new attempt waits behind our retries. One future, with the work between its awaits
/// in plain functions: it keeps only what lives across an await. Rejects with the error
/// as JS sees it. The sequence ends in this tab ([`SingleFlight::end`]) as the future
/// returns, once its other locals are dropped, before the promise settles.
///
/// [`SingleFlight::end`]: super::flight::SingleFlight::end
pub(crate) async fn run(
    inner: Rc<Inner>,
    opts: Rc<Options>,
    flight: Rc<Flight>,
    body: String,
    started: f64,
) -> core::result::Result<JsValue, JsValue> {
    // Dropped after the future's other locals (the lock among them) when it returns, and
    // so before its promise settles.
    let _end = End(&inner, &flight);
    let inner = &inner;
    let flight = &*flight;
    if let Some(r) = inner.stored_answer(&flight.fp).await {
        return Ok(r);
    }
    let held = inner.hold().await;
    let (mut rec, _) = held.read().await;
    // Includes "another tab failed this very payload while we waited: its answer is ours".
    match plan_submit_since(&rec, &flight.fp, now_ms(), started) {
        SubmitPlan::Cached => {
            if let Some(r) = cached(&rec) {
                return Ok(r);
            }
        }
        SubmitPlan::Conflict => {
            return Err(Error::PayloadConflict {
                state: rec.state.as_str(),
            }
            .into())
        }
        SubmitPlan::Send { new_key: true } => rec = inner.fresh(),
        SubmitPlan::Send { new_key: false } => {}
    }
    flight.bind(&rec.key);
    rec.fingerprint = Some(flight.fp.clone());
    rec.state = State::Pending;
    let t0 = now_ms();
    let mut retries = 0;
    let out = loop {
        count_try(flight, &mut rec)?;
        let stored = held.store_unposted(&mut rec).await;
        let sent = launch(inner, &opts, &rec, &body, t0, stored);
        let delay_ms = match after(inner, &opts, &mut rec, retries, t0, sent.await)? {
            Step::Done(out) => break out,
            Step::Wait(ms) => ms,
        };
        let _ = sleep(delay_ms as f64).await;
        retries += 1;
    };
    // Resolved before IndexedDB has it only where the copy outlives the page.
    if inner.store.kind() == StorageKind::Local {
        held.store_answer(inner.clone(), rec);
    } else {
        held.store(&mut rec).await;
    }
    Ok(out)
}

/// Ends the sequence in this tab when dropped.
struct End<'a>(&'a Inner, &'a Rc<Flight>);

impl Drop for End<'_> {
    fn drop(&mut self) {
        self.0.flight.end(self.1);
    }
}

/// What follows a try: the final answer's result, or the next try after a delay (ms).
enum Step {
    Done(JsValue),
    Wait(u32),
}

/// Counts the next try in `rec`; `outcome-unknown` (abandoned) when the key was given up.
#[inline(never)]
fn count_try(flight: &Flight, rec: &mut Record) -> core::result::Result<(), JsValue> {
    if flight.abandoned() {
        return Err(unknown(rec, "abandoned".into(), true));
    }
    rec.attempts += 1;
    rec.updated_at = now_ms();
    Ok(())
}

/// Sends the try `rec` counts, whose record text `stored` is stored: the `attempt` event,
/// the request, then the notice to the other tabs.
#[inline(never)]
fn launch(
    inner: &Inner,
    o: &Options,
    rec: &Record,
    body: &str,
    t0: f64,
    stored: String,
) -> JsFuture {
    inner.events.emit(
        &rec.key,
        Event::Attempt {
            attempt: rec.attempts,
        },
    );
    let left = o.deadline_ms as f64 - (now_ms() - t0);
    let sent = http::send(&http::Try {
        url: &o.endpoint,
        method: &o.method,
        headers: &http::joined(&o.headers),
        key_name: &o.header_name,
        key_value: &format_key(&rec.key, o.header_format),
        body,
        credentials: &o.credentials,
        timeout_ms: (o.timeout_ms as f64).min(left).max(1.0),
    });
    // The other tabs hear of the try once it is on its way: the record is stored
    // before, and the notice only keeps their display current.
    inner.post(Notice::Stored(&stored));
    sent
}

/// The try `rec` counts settled with `settled`, the `retries` before it done: its events,
/// and the final answer (put in `rec`), the delay before the next try, or `outcome-unknown`.
#[inline(never)]
fn after(
    inner: &Inner,
    opts: &Options,
    rec: &mut Record,
    retries: u32,
    t0: f64,
    settled: core::result::Result<JsValue, JsValue>,
) -> core::result::Result<Step, JsValue> {
    let (outcome, retry_after) = match http::answer(settled) {
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
                let r = StoredResponse {
                    status,
                    body,
                    replayed,
                };
                rec.state = state;
                rec.updated_at = now_ms();
                let out = result(&rec.key, &r, false, rec.attempts);
                rec.response = Some(r);
                return Ok(Step::Done(out));
            }
            (
                TryOutcome::Response(status),
                retry_after.and_then(|v| parse_retry_after_with(&v, now_ms(), http::http_date)),
            )
        }
        Err(NoAnswer::Network) => (TryOutcome::NetworkError, None),
        Err(NoAnswer::Timeout) => (TryOutcome::Timeout, None),
    };
    let reason = outcome.reason();
    let policy = opts.retry_policy();
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
            Ok(Step::Wait(delay_ms))
        }
        Next::GiveUp => Err(unknown(rec, reason, false)),
    }
}

/// `outcome-unknown` after `rec`'s tries, as JS sees it: made in one place for both ways
/// a submit ends without an answer.
#[inline(never)]
fn unknown(rec: &Record, reason: String, abandoned: bool) -> JsValue {
    Error::OutcomeUnknown {
        attempts: rec.attempts,
        reason,
        abandoned,
    }
    .into()
}
