//! Browser tests of the retry loop: timeouts, 502/503, dropped connections and network
//! errors retried with the same key; exhausted retries and the deadline; Retry-After;
//! which statuses are final; how bodies resolve. The real server where it can fault,
//! a fetch stub where exact answers matter.
#![cfg(target_arch = "wasm32")]

mod support;

use js_sys::Array;
use support::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn a_timeout_is_retried_with_the_same_key_and_replayed() {
    let (c, customer, ev) = checkout(r#"{"timeoutMs":300,"backoff":{"baseMs":20,"maxMs":40}}"#);
    fault(&customer, "delay-after-commit", 1, 1500).await;
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
    assert_eq!(ledger(&customer).await, vec![c.key()], "{mode}: one charge");
    c.finish();
}

#[wasm_bindgen_test]
async fn a_502_after_commit_is_retried_and_replayed() {
    retried_once("error-after-commit", "status-502", true).await;
}

#[wasm_bindgen_test]
async fn a_503_before_commit_is_retried_and_charged_once() {
    retried_once("fail-before-commit", "status-503", false).await;
}

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

#[wasm_bindgen_test]
async fn a_network_error_is_retried_with_the_same_key() {
    let (r, stub, ev) = stubbed(r#"[null, null, [201, "{}", {}]]"#, FAST).await;
    assert_eq!(num(&r.unwrap(), "attempts"), 3.0);
    let reasons: Vec<String> = events_of(&ev, "retry")
        .iter()
        .map(|e| text(e, "reason"))
        .collect();
    assert_eq!(reasons, ["network-error", "network-error"]);
    let keys: Vec<String> = Array::from(&get(&stub, "seen"))
        .iter()
        .map(|s| text(&s, "key"))
        .collect();
    assert!(
        keys.len() == 3 && keys.iter().all(|k| *k == keys[0]),
        "{keys:?}"
    );
}

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

/// Sends through a stubbed `fetch` answering `answers` in turn.
async fn stubbed(
    answers: &str,
    extra: &str,
) -> (Result<JsValue, JsValue>, js_sys::Function, js_sys::Function) {
    let (c, _, ev) = checkout(extra);
    let stub = stub_fetch(js(answers));
    let r = submit(&c, &js(PAY)).await;
    restore(&stub);
    c.finish();
    (r, stub, ev)
}

#[wasm_bindgen_test]
async fn bodies_resolve_as_json_text_or_null() {
    let (r, _, _) = stubbed(r#"[[200, "plain words", {}]]"#, "{}").await;
    assert_eq!(
        field(&r.unwrap(), "body").as_string().as_deref(),
        Some("plain words")
    );
    let (r, _, _) = stubbed(r#"[[204, "", {}]]"#, "{}").await;
    let r = r.unwrap();
    assert!(field(&r, "body").is_null());
    assert!(flag(&r, "ok"));
    let (r, _, _) = stubbed(r#"[[201, "[1,2]", {"Idempotent-Replayed": "true"}]]"#, "{}").await;
    let r = r.unwrap();
    assert_eq!(Array::from(&field(&r, "body")).length(), 2);
    assert!(flag(&r, "replayed"));
}

#[wasm_bindgen_test]
async fn retry_after_is_honoured() {
    let answers =
        r#"[[429, "", {"Retry-After": "1"}], [503, "", {"Retry-After": "0"}], [201, "{}", {}]]"#;
    let t0 = js_sys::Date::now();
    let (r, stub, ev) = stubbed(answers, r#"{"backoff":{"baseMs":5000,"maxMs":5000}}"#).await;
    let took = js_sys::Date::now() - t0;
    assert_eq!(num(&r.unwrap(), "attempts"), 3.0);
    let delays: Vec<f64> = events_of(&ev, "retry")
        .iter()
        .map(|e| num(e, "delayMs"))
        .collect();
    assert_eq!(delays, [1000.0, 0.0], "Retry-After, not the 5 s backoff");
    assert!((1000.0..4000.0).contains(&took), "took {took} ms");
    let keys: Vec<String> = Array::from(&get(&stub, "seen"))
        .iter()
        .map(|s| text(&s, "key"))
        .collect();
    assert_eq!(keys.len(), 3);
    assert!(
        keys.iter().all(|k| *k == keys[0]),
        "one key for every try: {keys:?}"
    );
    let bodies: Vec<String> = Array::from(&get(&stub, "seen"))
        .iter()
        .map(|s| text(&s, "body"))
        .collect();
    assert!(
        bodies.iter().all(|b| *b == bodies[0]),
        "one body for every try"
    );
}

#[wasm_bindgen_test]
async fn any_other_status_is_final() {
    for status in [400, 401, 403, 404, 410, 422, 501] {
        let (r, stub, _) = stubbed(
            &format!(r#"[[{status}, "{{}}", {{}}], [201, "{{}}", {{}}]]"#),
            FAST,
        )
        .await;
        let r = r.unwrap();
        assert_eq!(num(&r, "status"), status as f64);
        assert!(!flag(&r, "ok"));
        assert_eq!(
            Array::from(&get(&stub, "seen")).length(),
            1,
            "{status} is not retried"
        );
    }
    for status in [408, 409, 425, 429, 500, 502, 503, 504] {
        let (r, stub, _) = stubbed(
            &format!(r#"[[{status}, "", {{}}], [201, "{{}}", {{}}]]"#),
            FAST,
        )
        .await;
        assert_eq!(num(&r.unwrap(), "status"), 201.0, "{status} is retried");
        assert_eq!(Array::from(&get(&stub, "seen")).length(), 2);
    }
}
