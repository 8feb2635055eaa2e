//! Browser tests of the retry loop: timeouts, every retried status, dropped connections and
//! network errors retried with the same key and body; exhausted retries; which statuses
//! are final; how bodies resolve. How long it waits between tries is waits.rs.
//! All against the real reference server: its `respond` fault answers with an exact status,
//! Retry-After, body and Content-Type, `drop-before-commit` closes the connection unanswered,
//! and `GET /api/faults` logs every request that took a fault unit with its key and payload
//! fingerprint, which is how these tests count requests and compare keys and bodies.

use crate::support::*;
use js_sys::Array;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

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
    // After a refresh (a new page, the old one gone) the same payload resumes with the
    // same key.
    let scope = c.scope();
    drop(c);
    let page = Tab::open().await;
    let refreshed = page.open_checkout(&opts(&scope, &customer, "{}"));
    assert_eq!(
        (refreshed.key(), refreshed.state()),
        (key.clone(), "pending".to_string())
    );
    let r = refreshed.submit(&js(PAY_REORDERED)).await;
    assert_eq!(num(&r, "status"), 201.0, "{r:?}");
    assert_eq!(text(&r, "key"), key);
    assert_eq!(num(&r, "attempts"), 4.0);
    assert_eq!(ledger(&customer).await, vec![key]);
    refreshed.finish();
    page.close();
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
