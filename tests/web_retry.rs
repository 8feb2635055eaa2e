//! Browser tests of the retry loop: timeouts, every retried status, dropped connections and
//! network errors retried with the same key and body; exhausted retries and the deadline;
//! Retry-After in seconds and as an HTTP date; which statuses are final; how bodies resolve.
//! All against the real reference server: its `respond` fault answers with an exact status,
//! Retry-After, body and Content-Type, `drop-before-commit` closes the connection unanswered,
//! and `GET /api/faults` logs every request that took a fault unit with its key and payload
//! fingerprint, which is how these tests count requests and compare keys and bodies.
#![cfg(target_arch = "wasm32")]

mod support;

use js_sys::Array;
use support::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

// P-timeout-retried: a timed-out try is retried with the same key
// P-retry-statuses: a timeout is retried
// P-event-response: the response event says replayed
#[wasm_bindgen_test]
async fn a_timeout_is_retried_with_the_same_key_and_replayed() {
    // The first try must commit before it times out (else the retry meets a 409 "still
    // running"): a second of timeout leaves a slow, busy CI machine ample room for that.
    let (c, customer, ev) = checkout(r#"{"timeoutMs":1000,"backoff":{"baseMs":20,"maxMs":40}}"#);
    fault(&customer, "delay-after-commit", 1, 3000).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert!(
        flag(&r, "replayed"),
        "the second try is the server's replay"
    );
    assert_eq!(num(&r, "attempts"), 2.0);
    let retry = events_of(&ev, "retry");
    assert_eq!(retry.len(), 1);
    assert_eq!(text(&retry[0], "reason"), "timeout");
    assert!(num(&retry[0], "delayMs") <= 20.0);
    let replayed: Vec<bool> = events_of(&ev, "response")
        .iter()
        .map(|e| flag(e, "replayed"))
        .collect();
    assert_eq!(replayed, [true]);
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

async fn retried_once(mode: &str, reason: &str, replayed: bool) {
    let (c, customer, ev) = checkout(FAST);
    fault(&customer, mode, 1, 0).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0, "{mode}");
    assert_eq!(flag(&r, "replayed"), replayed, "{mode}");
    assert_eq!(num(&r, "attempts"), 2.0, "{mode}");
    let retry = events_of(&ev, "retry");
    assert_eq!(retry.len(), 1, "{mode}");
    assert_eq!(text(&retry[0], "reason"), reason);
    assert_eq!(
        num(&retry[0], "attempt"),
        1.0,
        "{mode}: the try that failed"
    );
    // The tries are counted for this key, in the events before and after each.
    for ty in ["attempt", "response"] {
        let n: Vec<f64> = events_of(&ev, ty)
            .iter()
            .map(|e| num(e, "attempt"))
            .collect();
        assert_eq!(n, [1.0, 2.0], "{mode}: {ty} events");
    }
    assert_eq!(ledger(&customer).await, vec![c.key()], "{mode}: one charge");
    c.finish();
}

// P-replayed: Idempotent-Replayed: true shows as replayed
// P-event-retry: a retry event with attempt, delayMs and reason status-502
// P-event-attempt: attempt events count the tries, 1 then 2
#[wasm_bindgen_test]
async fn a_502_after_commit_is_retried_and_replayed() {
    retried_once("error-after-commit", "status-502", true).await;
}

// P-retry-statuses: a 503 is retried with the same key
#[wasm_bindgen_test]
async fn a_503_before_commit_is_retried_and_charged_once() {
    retried_once("fail-before-commit", "status-503", false).await;
}

// P-retry-statuses: a dropped connection is retried as a network error
#[wasm_bindgen_test]
async fn a_dropped_connection_is_retried_and_replayed() {
    // Chromium itself re-sends a request whose reused keep-alive connection closes before
    // any response byte; either way the same key must reach the server again and charge once.
    let (c, customer, ev) = checkout(FAST);
    fault(&customer, "drop-after-commit", 1, 0).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert!(
        flag(&r, "replayed"),
        "the key reached the server a second time"
    );
    let reasons: Vec<String> = events_of(&ev, "retry")
        .iter()
        .map(|e| text(e, "reason"))
        .collect();
    assert_eq!(reasons.len() as f64, num(&r, "attempts") - 1.0);
    assert!(reasons.iter().all(|r| r == "network-error"), "{reasons:?}");
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

// P-max-retries: maxRetries 2 is three tries
// P-outcome-unknown-keeps-key: retries used up: outcome-unknown, pending, the key kept and resumed after a refresh
// P-unknown-resumes: after a refresh the same payload sends the same key: one charge
// P-error-payload-conflict: another payload while pending: payload-conflict
#[wasm_bindgen_test]
async fn exhausted_retries_keep_the_key_pending_and_a_later_submit_resumes() {
    let (c, customer, _) = checkout(r#"{"maxRetries":2,"backoff":{"baseMs":10,"maxMs":20}}"#);
    let key = c.key();
    fault(&customer, "fail-before-commit", 3, 0).await;
    let e = submit(&c, &js(PAY)).await.unwrap_err();
    assert_idem_error(&e, "outcome-unknown", "status-503");
    assert_eq!(c.state(), "pending");
    assert_eq!(c.key(), key);
    assert_eq!(c.attempts(), 3);
    assert!(ledger(&customer).await.is_empty());
    // Another payload may not take the pending key.
    assert_idem_error(
        &submit(&c, &js(OTHER)).await.unwrap_err(),
        "payload-conflict",
        "pending",
    );
    // After a refresh the same payload resumes with the same key.
    let refreshed = open(&opts(&c.scope(), &customer, "{}"));
    assert_eq!(
        (refreshed.key(), refreshed.state()),
        (key.clone(), "pending".to_string())
    );
    let r = submit(&refreshed, &js(PAY_REORDERED)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(text(&r, "key"), key);
    assert_eq!(num(&r, "attempts"), 4.0);
    assert_eq!(ledger(&customer).await, vec![key]);
    c.finish();
}

// P-deadline: deadlineMs cuts a slow try: outcome-unknown within the budget
#[wasm_bindgen_test]
async fn the_deadline_bounds_the_whole_submit() {
    let (c, customer, ev) = checkout(r#"{"deadlineMs":400,"timeoutMs":10000,"maxRetries":50}"#);
    fault(&customer, "delay-after-commit", 1, 2000).await;
    let t0 = js_sys::Date::now();
    let e = submit(&c, &js(PAY)).await.unwrap_err();
    let took = js_sys::Date::now() - t0;
    assert_idem_error(&e, "outcome-unknown", "timeout");
    assert!(took < 1500.0, "gave up after {took} ms");
    assert!(events_of(&ev, "retry").is_empty());
    assert_eq!(c.state(), "pending");
    c.finish();
}

// P-timeout-retried: a try is cut at timeoutMs while the page makes garbage (a fetch whose abort hung on an object the collector took would run on)
#[wasm_bindgen_test]
async fn a_try_is_cut_at_its_timeout_while_the_page_makes_garbage() {
    let stop = churn_garbage();
    let mut outlived = vec![];
    for _ in 0..6 {
        let (c, customer, _ev) = checkout(r#"{"timeoutMs":300,"maxRetries":0}"#);
        fault(&customer, "delay-after-commit", 1, 2000).await;
        let t0 = js_sys::Date::now();
        let r = submit(&c, &js(PAY)).await;
        let took = js_sys::Date::now() - t0;
        match r {
            Err(e) if took < 1500.0 => assert_idem_error(&e, "outcome-unknown", "timeout"),
            r => outlived.push(format!("{took} ms: {r:?}")),
        }
        c.finish();
    }
    restore(&stop);
    assert!(
        outlived.is_empty(),
        "tries that ran on past their 300 ms timeout: {outlived:?}"
    );
}

/// A fault unit that changes nothing (`delay-after-commit` of 0 ms): scheduled after the
/// faults under test, it makes the final, successful request show up in the fault log too.
const MARKER: &str = r#"{"mode":"delay-after-commit","delay_ms":0}"#;

/// Asserts that the requests that reached the server took exactly the fault units `modes`,
/// in order, all with `key` and with one payload fingerprint (the same body), and that
/// nothing is left scheduled.
async fn assert_requests(customer: &str, key: &str, modes: &[&str]) {
    let f = faults(customer).await;
    assert_eq!(
        Array::from(&get(&f, "scheduled")).length(),
        0,
        "all units taken"
    );
    let taken: Vec<JsValue> = Array::from(&get(&f, "taken")).iter().collect();
    let seen: Vec<String> = taken.iter().map(|t| text(t, "mode")).collect();
    assert_eq!(seen, modes, "the requests that reached the server");
    let fp = text(&taken[0], "fingerprint");
    for t in &taken {
        assert_eq!(text(t, "key"), key, "one key for every try");
        assert_eq!(text(t, "fingerprint"), fp, "one body for every try");
    }
}

fn reasons(ev: &js_sys::Function) -> Vec<String> {
    events_of(ev, "retry")
        .iter()
        .map(|e| text(e, "reason"))
        .collect()
}

// P-retry-statuses: 408 409 425 429 500 502 503 504 are retried with the same key and body
// P-event-retry: each retry event's reason is status-N
// P-event-response: a response event with each try's status
#[wasm_bindgen_test]
async fn every_retried_status_is_retried_with_the_same_key_and_body() {
    for status in [408, 409, 425, 429, 500, 502, 503, 504] {
        // Chromium itself silently re-sends a request that got a 408 on a reused keep-alive
        // connection (as it does when such a connection closes unanswered): give it more 408s
        // than it absorbs for one fetch, so that our own loop must see one.
        let units = if status == 408 { 4 } else { 1 };
        let (c, customer, ev) = checkout(FAST);
        schedule(
            &customer,
            &format!(r#"{{"mode":"respond","count":{units},"status":{status},"body":"{{\"try\":\"again\"}}","content_type":"application/json"}}"#),
        )
        .await;
        schedule(&customer, MARKER).await;
        let r = submit(&c, &js(PAY)).await.unwrap();
        assert_eq!(num(&r, "status"), 201.0, "{status} is retried");
        assert!(!flag(&r, "replayed"), "{status}: nothing was stored before");
        let reasons = reasons(&ev);
        assert!(
            (1..=units).contains(&reasons.len()),
            "{status}: {reasons:?}"
        );
        assert!(
            reasons.iter().all(|r| *r == format!("status-{status}")),
            "{reasons:?}"
        );
        assert_eq!(num(&r, "attempts"), reasons.len() as f64 + 1.0, "{status}");
        let statuses: Vec<f64> = events_of(&ev, "response")
            .iter()
            .map(|e| num(e, "status"))
            .collect();
        assert_eq!(statuses.len(), reasons.len() + 1, "{status}");
        assert!(statuses[..reasons.len()]
            .iter()
            .all(|s| *s == status as f64));
        assert_eq!(statuses.last(), Some(&201.0), "{status}");
        assert_eq!(c.state(), "succeeded");
        let mut modes = vec!["respond"; units];
        modes.push("delay-after-commit");
        assert_requests(&customer, &c.key(), &modes).await;
        assert_eq!(
            ledger(&customer).await,
            vec![c.key()],
            "{status}: one charge"
        );
        c.finish();
    }
}

// P-final-resolves: any other status resolves at once, not ok, state failed
#[wasm_bindgen_test]
async fn any_other_status_is_final() {
    for status in [400, 401, 403, 404, 410, 422, 501] {
        let (c, customer, ev) = checkout(FAST);
        // Two units: a retry would take the second one and show in the log.
        schedule(
            &customer,
            &format!(r#"{{"mode":"respond","count":2,"status":{status},"body":"{{\"code\":\"no-{status}\"}}","content_type":"application/problem+json"}}"#),
        )
        .await;
        let r = submit(&c, &js(PAY)).await.unwrap();
        assert_eq!(num(&r, "status"), status as f64);
        assert!(!flag(&r, "ok"));
        assert_eq!(num(&r, "attempts"), 1.0, "{status}");
        assert_eq!(text(&field(&r, "body"), "code"), format!("no-{status}"));
        assert!(
            events_of(&ev, "retry").is_empty(),
            "{status} is not retried"
        );
        assert_eq!(c.state(), "failed", "{status}");
        let f = faults(&customer).await;
        assert_eq!(
            num(&Array::from(&get(&f, "scheduled")).get(0), "remaining"),
            1.0,
            "{status}: exactly one request reached the server"
        );
        let taken = Array::from(&get(&f, "taken"));
        assert_eq!(taken.length(), 1, "{status}");
        assert_eq!(text(&taken.get(0), "key"), c.key());
        assert!(ledger(&customer).await.is_empty());
        c.finish();
    }
}

// P-retry-after: Retry-After in seconds or as a date sets the wait, not the backoff
// P-event-retry: the retry event's delayMs is the wait
#[wasm_bindgen_test]
async fn retry_after_as_an_http_date_and_in_seconds_is_honoured() {
    // A backoff of up to 5 s: a delay that follows Retry-After instead is unmistakable.
    let (c, customer, ev) = checkout(r#"{"backoff":{"baseMs":5000,"maxMs":5000}}"#);
    // An IMF-fixdate 1.2 to 2.2 s ahead (whole seconds).
    let target = ((js_sys::Date::now() + 1200.0) / 1000.0).ceil() * 1000.0;
    let date: String = js_sys::Date::new(&JsValue::from_f64(target))
        .to_utc_string()
        .into();
    assert!(date.ends_with(" GMT"), "{date}");
    schedule(
        &customer,
        &format!(r#"{{"mode":"respond","status":503,"retry_after":"{date}"}}"#),
    )
    .await;
    schedule(
        &customer,
        r#"{"mode":"respond","status":429,"retry_after":"1"}"#,
    )
    .await;
    schedule(
        &customer,
        r#"{"mode":"respond","status":503,"retry_after":"0"}"#,
    )
    .await;
    schedule(&customer, MARKER).await;
    let t0 = js_sys::Date::now();
    let r = submit(&c, &js(PAY)).await.unwrap();
    let took = js_sys::Date::now() - t0;
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(num(&r, "attempts"), 4.0);
    let retries = timed_events_of(&ev, "retry");
    assert_eq!(retries.len(), 3);
    let delays: Vec<f64> = retries.iter().map(|(e, _)| num(e, "delayMs")).collect();
    // The date: the time left until it when the answer came (the event is emitted just
    // after the client read its clock, so a few ms of slack).
    let (_, at) = retries[0];
    let left = target - at;
    assert!(
        (left - 5.0..=left + 100.0).contains(&delays[0]),
        "Retry-After {date}: delay {} ms, {left} ms were left",
        delays[0]
    );
    assert_eq!(
        &delays[1..],
        [1000.0, 0.0],
        "Retry-After 1 and 0, not the 5 s backoff"
    );
    assert!(
        took >= delays.iter().sum::<f64>(),
        "took {took} ms for {delays:?}"
    );
    assert!(took < delays.iter().sum::<f64>() + 2000.0, "took {took} ms");
    assert_eq!(reasons(&ev), ["status-503", "status-429", "status-503"]);
    assert_requests(
        &customer,
        &c.key(),
        &["respond", "respond", "respond", "delay-after-commit"],
    )
    .await;
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

// P-retry-statuses: a network error is retried with the same key
#[wasm_bindgen_test]
async fn a_network_error_is_retried_with_the_same_key() {
    // Chromium silently re-sends a request once (or more) when a *reused* keep-alive
    // connection closes before any response byte; four units are more than it absorbs
    // for one fetch, so our own loop must see at least one network error.
    let (c, customer, ev) = checkout(FAST);
    schedule(&customer, r#"{"mode":"drop-before-commit","count":4}"#).await;
    schedule(&customer, MARKER).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert!(!flag(&r, "replayed"), "the dropped requests stored nothing");
    let reasons = reasons(&ev);
    assert!(!reasons.is_empty(), "no network error reached the client");
    assert!(reasons.iter().all(|r| r == "network-error"), "{reasons:?}");
    assert_eq!(reasons.len() as f64, num(&r, "attempts") - 1.0);
    assert_requests(
        &customer,
        &c.key(),
        &[
            "drop-before-commit",
            "drop-before-commit",
            "drop-before-commit",
            "drop-before-commit",
            "delay-after-commit",
        ],
    )
    .await;
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

/// Submits `PAY` once through a fresh checkout whose first request gets `spec` (JSON of a
/// `respond` fault); returns the result. A 2xx `respond` stores nothing on the server:
/// these answers test how the client reads bodies, not the ledger.
async fn answered(spec: &str) -> JsValue {
    let (c, customer, _) = checkout("{}");
    schedule(&customer, spec).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "attempts"), 1.0);
    assert_eq!(c.state(), "succeeded");
    c.finish();
    r
}

// P-final-resolves: 200 and 204 resolve ok; the body is JSON, text or null
// P-replayed: a replayed answer says replayed
#[wasm_bindgen_test]
async fn bodies_resolve_as_json_text_or_null() {
    let r = answered(
        r#"{"mode":"respond","status":200,"body":"plain words","content_type":"text/plain"}"#,
    )
    .await;
    assert_eq!(num(&r, "status"), 200.0);
    assert_eq!(
        field(&r, "body").as_string().as_deref(),
        Some("plain words")
    );
    let r = answered(r#"{"mode":"respond","status":204}"#).await;
    assert_eq!(num(&r, "status"), 204.0);
    assert!(field(&r, "body").is_null());
    assert!(flag(&r, "ok"));
    let r = answered(r#"{"mode":"respond","status":201,"body":""}"#).await;
    assert_eq!(num(&r, "status"), 201.0);
    assert!(field(&r, "body").is_null(), "an empty 201 is null too");
    let r = answered(
        r#"{"mode":"respond","status":201,"body":"[1,2]","content_type":"application/json"}"#,
    )
    .await;
    let arr = Array::from(&field(&r, "body"));
    assert_eq!(
        (arr.length(), arr.get(0).as_f64(), arr.get(1).as_f64()),
        (2, Some(1.0), Some(2.0))
    );
    assert!(!flag(&r, "replayed"));
    // The server's own JSON, first as sent and then as replayed after a lost answer.
    let (c, customer, _) = checkout(FAST);
    fault(&customer, "error-after-commit", 1, 0).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert!(
        flag(&r, "replayed"),
        "Idempotent-Replayed: true from the server"
    );
    let body = field(&r, "body");
    assert_eq!(text(&body, "key"), c.key());
    assert_eq!(num(&body, "amount"), 4200.0);
    assert_eq!(text(&body, "object"), "charge");
    c.finish();
}

// P-backoff: each wait is random, up to min(maxMs, baseMs * 2^n), and is waited out before the next try
#[wasm_bindgen_test]
async fn the_backoff_grows_exponentially_up_to_max_ms_with_full_jitter() {
    let (c, customer, ev) = checkout(r#"{"maxRetries":6,"backoff":{"baseMs":100,"maxMs":400}}"#);
    // 503s without Retry-After: the backoff alone sets each wait.
    schedule(&customer, r#"{"mode":"respond","count":6,"status":503}"#).await;
    schedule(&customer, MARKER).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!((num(&r, "status"), num(&r, "attempts")), (201.0, 7.0));
    let retries = timed_events_of(&ev, "retry");
    let tries = timed_events_of(&ev, "attempt");
    assert_eq!((retries.len(), tries.len()), (6, 7));
    let caps = [100.0, 200.0, 400.0, 400.0, 400.0, 400.0];
    let delays: Vec<f64> = retries.iter().map(|(e, _)| num(e, "delayMs")).collect();
    for (n, (delay, cap)) in delays.iter().zip(caps).enumerate() {
        assert!(
            (0.0..=cap).contains(delay),
            "wait {n}: {delay} ms, above min(maxMs, baseMs * 2^{n}) = {cap}: {delays:?}"
        );
        // The next try goes out once the wait is over (timers may round down by 1 ms).
        let (waited_from, next_try) = (retries[n].1, tries[n + 1].1);
        assert!(
            next_try - waited_from >= delay - 2.0,
            "try {} after {} ms, before its {delay} ms wait was over",
            n + 2,
            next_try - waited_from
        );
    }
    // Full jitter: random waits, not the caps (all six at 95 % of their cap or more has
    // a chance of 1 in 64 million).
    assert!(
        delays.iter().zip(caps).any(|(d, cap)| *d < cap * 0.95),
        "every wait at its cap: {delays:?}"
    );
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

// P-deadline: a wait (Retry-After or backoff) that would pass deadlineMs ends the submit at once with outcome-unknown
#[wasm_bindgen_test]
async fn a_wait_past_the_deadline_ends_the_submit_at_once() {
    let (c, customer, ev) = checkout(r#"{"deadlineMs":3000}"#);
    let key = c.key();
    schedule(
        &customer,
        r#"{"mode":"respond","count":2,"status":503,"retry_after":"10"}"#,
    )
    .await;
    let t0 = js_sys::Date::now();
    let e = submit(&c, &js(PAY)).await.unwrap_err();
    let took = js_sys::Date::now() - t0;
    assert_idem_error(&e, "outcome-unknown", "");
    assert!(
        took < 2000.0,
        "waited {took} ms for a wait past the deadline"
    );
    assert_eq!(events_of(&ev, "attempt").len(), 1, "one try");
    let f = faults(&customer).await;
    assert_eq!(
        num(&Array::from(&get(&f, "scheduled")).get(0), "remaining"),
        1.0,
        "one request reached the server"
    );
    assert_eq!((c.state(), c.key()), ("pending".to_string(), key));
    c.finish();
}
