//! Browser tests of `submit()` against the real reference server (started by
//! scripts/wasm-test.sh): one charge per attempt through double-clicks, refreshes, tabs,
//! timeouts, 502/503, dropped connections, exhausted retries, conflicts and declines.
#![cfg(target_arch = "wasm32")]

mod support;

use idemkey::Checkout;
use js_sys::Array;
use support::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const PAY: &str = r#"{"amount":4200,"currency":"eur","items":[{"sku":"tea","qty":2}]}"#;
/// The same payload with every object's keys in another order.
const PAY_REORDERED: &str = r#"{"items":[{"qty":2,"sku":"tea"}],"currency":"eur","amount":4200}"#;
const OTHER: &str = r#"{"amount":999,"currency":"eur"}"#;
const DECLINED: &str = r#"{"amount":500,"currency":"eur","card":"4000000000000002"}"#;
/// Quick retries so the suite stays fast.
const FAST: &str = r#"{"backoff":{"baseMs":20,"maxMs":40}}"#;

/// A checkout with a fresh scope and customer, and its event recorder.
fn checkout(extra: &str) -> (Checkout, String, js_sys::Function) {
    let customer = uniq("cust");
    let ev = recorder();
    let o = opts(&uniq("cart"), &customer, extra);
    set(&o, "onEvent", &ev);
    (open(&o), customer, ev)
}

fn field(r: &JsValue, name: &str) -> JsValue {
    get(r, name)
}

fn num(r: &JsValue, name: &str) -> f64 {
    field(r, name).as_f64().unwrap_or_else(|| panic!("{name} of {r:?}"))
}

fn flag(r: &JsValue, name: &str) -> bool {
    field(r, name).as_bool().unwrap_or_else(|| panic!("{name} of {r:?}"))
}

fn text(r: &JsValue, name: &str) -> String {
    field(r, name).as_string().unwrap_or_else(|| panic!("{name} of {r:?}"))
}

#[wasm_bindgen_test]
async fn one_submit_makes_one_charge() {
    let (c, customer, ev) = checkout("{}");
    let key = c.key();
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert!(flag(&r, "ok"));
    assert!(!flag(&r, "replayed"));
    assert!(!flag(&r, "fromCache"));
    assert_eq!(num(&r, "attempts"), 1.0);
    assert_eq!(text(&r, "key"), key);
    let body = field(&r, "body");
    assert_eq!(text(&body, "object"), "charge", "body is parsed JSON");
    assert_eq!(text(&body, "key"), key);
    assert_eq!(c.state(), "succeeded");
    assert_eq!(c.attempts(), 1);
    assert_eq!(ledger(&customer).await, vec![key.clone()]);
    assert_eq!(types(&ev), ["state", "attempt", "response", "state"]);
    let states: Vec<String> = events_of(&ev, "state").iter().map(|e| text(e, "state")).collect();
    assert_eq!(states, ["pending", "succeeded"]);
    c.finish();
}

#[wasm_bindgen_test]
async fn the_record_is_stored_before_the_request_and_a_refresh_sees_it() {
    let (c, customer, _) = checkout("{}");
    fault(&customer, "delay-after-commit", 1, 600).await;
    let key = c.key();
    let scope = c.scope();
    let p = c.submit(js(PAY));
    sleep(200).await;
    // Mid-request: the record is pending with its key, for this tab and a refreshed one.
    assert_eq!(c.state(), "pending");
    let refreshed = open(&opts(&scope, &customer, "{}"));
    assert_eq!(refreshed.key(), key);
    assert_eq!(refreshed.state(), "pending");
    assert_eq!(refreshed.attempts(), 1);
    let r = JsFuture::from(p).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    // After the answer a refresh sees the outcome and gets it back without sending.
    let after = open(&opts(&scope, &customer, "{}"));
    assert_eq!(after.state(), "succeeded");
    let again = submit(&after, &js(PAY)).await.unwrap();
    assert!(flag(&again, "fromCache"));
    assert_eq!(text(&again, "key"), key);
    assert_eq!(ledger(&customer).await.len(), 1);
    c.finish();
}

#[wasm_bindgen_test]
async fn a_double_click_shares_one_request_sequence() {
    let (c, customer, ev) = checkout("{}");
    fault(&customer, "delay-after-commit", 1, 300).await;
    let p1 = c.submit(js(PAY));
    let p2 = c.submit(js(PAY_REORDERED));
    let (r1, r2) = (JsFuture::from(p1).await.unwrap(), JsFuture::from(p2).await.unwrap());
    assert!(js_sys::Object::is(&r1, &r2), "both clicks resolve with the same result");
    assert!(!flag(&r1, "fromCache"));
    assert_eq!(types(&ev).iter().filter(|t| *t == "attempt").count(), 1, "one request sequence");
    assert_eq!(ledger(&customer).await.len(), 1);
    c.finish();
}

#[wasm_bindgen_test]
async fn a_second_click_with_another_payload_while_in_flight_conflicts() {
    let (c, customer, _) = checkout("{}");
    fault(&customer, "delay-after-commit", 1, 300).await;
    let p1 = c.submit(js(PAY));
    let e = submit(&c, &js(OTHER)).await.unwrap_err();
    assert_idem_error(&e, "payload-conflict", "reset()");
    assert_eq!(num(&JsFuture::from(p1).await.unwrap(), "status"), 201.0);
    assert_eq!(ledger(&customer).await.len(), 1);
    c.finish();
}

async fn two_tabs(hide: bool) {
    let customer = uniq("cust");
    let scope = uniq("cart");
    let (ev_a, ev_b) = (recorder(), recorder());
    let (oa, ob) = (opts(&scope, &customer, "{}"), opts(&scope, &customer, "{}"));
    set(&oa, "onEvent", &ev_a);
    set(&ob, "onEvent", &ev_b);
    // Two Checkout objects on one scope act as two tabs: no shared single flight, only the lock.
    let (a, b) = (open(&oa), open(&ob));
    assert_eq!(a.key(), b.key());
    fault(&customer, "delay-after-commit", 1, 400).await;
    let undo = hide.then(hide_locks);
    let pa = a.submit(js(PAY));
    sleep(50).await;
    let pb = b.submit(js(PAY_REORDERED));
    let (ra, rb) = (JsFuture::from(pa).await, JsFuture::from(pb).await);
    if let Some(u) = &undo {
        restore(u);
    }
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert!(!flag(&ra, "fromCache"));
    assert!(flag(&rb, "fromCache"), "the waiting tab resolves with the stored result");
    assert_eq!(text(&rb, "key"), text(&ra, "key"));
    assert_eq!(num(&rb, "status"), 201.0);
    assert_eq!(text(&field(&rb, "body"), "id"), text(&field(&ra, "body"), "id"));
    assert!(events_of(&ev_b, "attempt").is_empty(), "the waiting tab sent nothing");
    assert_eq!(ledger(&customer).await.len(), 1);
    assert_eq!(local().get_item(&format!("idemkey:lease:{scope}")).unwrap(), None, "lease released");
    a.finish();
}

#[wasm_bindgen_test]
async fn a_second_tab_waits_on_the_web_lock_and_reads_the_stored_result() {
    two_tabs(false).await;
}

#[wasm_bindgen_test]
async fn without_web_locks_the_storage_lease_serialises_tabs() {
    two_tabs(true).await;
}

#[wasm_bindgen_test]
async fn a_timeout_is_retried_with_the_same_key_and_replayed() {
    let (c, customer, ev) = checkout(r#"{"timeoutMs":300,"backoff":{"baseMs":20,"maxMs":40}}"#);
    fault(&customer, "delay-after-commit", 1, 1500).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert!(flag(&r, "replayed"), "the second try is the server's replay");
    assert_eq!(num(&r, "attempts"), 2.0);
    let retry = events_of(&ev, "retry");
    assert_eq!(retry.len(), 1);
    assert_eq!(text(&retry[0], "reason"), "timeout");
    assert!(num(&retry[0], "delayMs") <= 20.0);
    let replayed: Vec<bool> = events_of(&ev, "response").iter().map(|e| flag(e, "replayed")).collect();
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
    assert!(flag(&r, "replayed"), "the key reached the server a second time");
    let reasons: Vec<String> = events_of(&ev, "retry").iter().map(|e| text(e, "reason")).collect();
    assert_eq!(reasons.len() as f64, num(&r, "attempts") - 1.0);
    assert!(reasons.iter().all(|r| r == "network-error"), "{reasons:?}");
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

#[wasm_bindgen_test]
async fn a_network_error_is_retried_with_the_same_key() {
    let (r, stub, ev) = stubbed(r#"[null, null, [201, "{}", {}]]"#, FAST).await;
    assert_eq!(num(&r.unwrap(), "attempts"), 3.0);
    let reasons: Vec<String> = events_of(&ev, "retry").iter().map(|e| text(e, "reason")).collect();
    assert_eq!(reasons, ["network-error", "network-error"]);
    let keys: Vec<String> = Array::from(&get(&stub, "seen")).iter().map(|s| text(&s, "key")).collect();
    assert!(keys.len() == 3 && keys.iter().all(|k| *k == keys[0]), "{keys:?}");
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
    assert_idem_error(&submit(&c, &js(OTHER)).await.unwrap_err(), "payload-conflict", "pending");
    // After a refresh the same payload resumes with the same key.
    let refreshed = open(&opts(&c.scope(), &customer, "{}"));
    assert_eq!((refreshed.key(), refreshed.state()), (key.clone(), "pending".to_string()));
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

#[wasm_bindgen_test]
async fn after_success_the_same_payload_comes_from_the_store_and_another_conflicts() {
    let (c, customer, ev) = checkout("{}");
    let first = submit(&c, &js(PAY)).await.unwrap();
    let spy = spy_fetch();
    let again = submit(&c, &js(PAY_REORDERED)).await;
    let sent = Array::from(&get(&spy, "seen")).length();
    restore(&spy);
    let again = again.unwrap();
    assert_eq!(sent, 0, "nothing sent");
    assert!(flag(&again, "fromCache"));
    assert_eq!(num(&again, "status"), 201.0);
    assert_eq!(text(&field(&again, "body"), "id"), text(&field(&first, "body"), "id"));
    assert_eq!(num(&again, "attempts"), 1.0);
    assert_eq!(events_of(&ev, "attempt").len(), 1);
    let e = submit(&c, &js(OTHER)).await.unwrap_err();
    assert_idem_error(&e, "payload-conflict", "succeeded");
    assert_eq!(c.state(), "succeeded");
    assert_eq!(ledger(&customer).await.len(), 1);
    // reset() starts a new attempt on purpose.
    let old = c.key();
    c.reset();
    let r = submit(&c, &js(OTHER)).await.unwrap();
    assert_ne!(text(&r, "key"), old);
    assert_eq!(ledger(&customer).await.len(), 2);
    c.finish();
}

#[wasm_bindgen_test]
async fn a_decline_fails_the_attempt_and_the_next_submit_gets_a_new_key() {
    let (c, customer, _) = checkout("{}");
    let k1 = c.key();
    let r = submit(&c, &js(DECLINED)).await.unwrap();
    assert_eq!(num(&r, "status"), 402.0);
    assert!(!flag(&r, "ok"));
    assert!(!flag(&r, "fromCache"));
    assert!(field(&r, "body").is_object(), "problem+json body parsed");
    assert_eq!(c.state(), "failed");
    assert_eq!(c.key(), k1, "the failed key stays until the next submit");
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert_ne!(text(&r, "key"), k1);
    assert_eq!(num(&r, "attempts"), 1.0);
    assert_eq!(c.key(), text(&r, "key"));
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

#[wasm_bindgen_test]
async fn header_name_and_sf_string_format() {
    let (c, customer, _) = checkout(r#"{"headerFormat":"sf-string"}"#);
    let spy = spy_fetch();
    let r = submit(&c, &js(PAY)).await;
    let seen = Array::from(&get(&spy, "seen"));
    restore(&spy);
    assert_eq!(num(&r.unwrap(), "status"), 201.0, "the server accepts a quoted key");
    assert_eq!(seen.length(), 1);
    assert_eq!(text(&seen.get(0), "key"), format!("\"{}\"", c.key()));
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();

    // A custom header name carries the bare key (the server ignores it, so no charge check).
    let (c, _, _) = checkout(r#"{"headerName":"PayPal-Request-Id","maxRetries":0}"#);
    let spy = spy_fetch();
    let r = submit(&c, &js(PAY)).await;
    let seen = Array::from(&get(&spy, "seen"));
    restore(&spy);
    assert_eq!(num(&r.unwrap(), "status"), 400.0, "no Idempotency-Key: the server refuses");
    assert_eq!(text(&seen.get(0), "custom"), c.key());
    assert!(get(&seen.get(0), "key").is_null());
    assert_eq!(c.state(), "failed");
    c.finish();
}

#[wasm_bindgen_test]
async fn a_throwing_on_event_never_breaks_submit() {
    let customer = uniq("cust");
    let o = opts(&uniq("cart"), &customer, FAST);
    set(&o, "onEvent", &thrower());
    let c = open(&o);
    fault(&customer, "error-after-commit", 1, 0).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(ledger(&customer).await.len(), 1);
    c.finish();
}

/// Sends through a stubbed `fetch` answering `answers` in turn.
async fn stubbed(answers: &str, extra: &str) -> (Result<JsValue, JsValue>, js_sys::Function, js_sys::Function) {
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
    assert_eq!(field(&r.unwrap(), "body").as_string().as_deref(), Some("plain words"));
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
    let answers = r#"[[429, "", {"Retry-After": "1"}], [503, "", {"Retry-After": "0"}], [201, "{}", {}]]"#;
    let t0 = js_sys::Date::now();
    let (r, stub, ev) = stubbed(answers, r#"{"backoff":{"baseMs":5000,"maxMs":5000}}"#).await;
    let took = js_sys::Date::now() - t0;
    assert_eq!(num(&r.unwrap(), "attempts"), 3.0);
    let delays: Vec<f64> = events_of(&ev, "retry").iter().map(|e| num(e, "delayMs")).collect();
    assert_eq!(delays, [1000.0, 0.0], "Retry-After, not the 5 s backoff");
    assert!((1000.0..4000.0).contains(&took), "took {took} ms");
    let keys: Vec<String> = Array::from(&get(&stub, "seen")).iter().map(|s| text(&s, "key")).collect();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| *k == keys[0]), "one key for every try: {keys:?}");
    let bodies: Vec<String> = Array::from(&get(&stub, "seen")).iter().map(|s| text(&s, "body")).collect();
    assert!(bodies.iter().all(|b| *b == bodies[0]), "one body for every try");
}

#[wasm_bindgen_test]
async fn any_other_status_is_final() {
    for status in [400, 401, 403, 404, 410, 422, 501] {
        let (r, stub, _) = stubbed(&format!(r#"[[{status}, "{{}}", {{}}], [201, "{{}}", {{}}]]"#), FAST).await;
        let r = r.unwrap();
        assert_eq!(num(&r, "status"), status as f64);
        assert!(!flag(&r, "ok"));
        assert_eq!(Array::from(&get(&stub, "seen")).length(), 1, "{status} is not retried");
    }
    for status in [408, 409, 425, 429, 500, 502, 503, 504] {
        let (r, stub, _) = stubbed(&format!(r#"[[{status}, "", {{}}], [201, "{{}}", {{}}]]"#), FAST).await;
        assert_eq!(num(&r.unwrap(), "status"), 201.0, "{status} is retried");
        assert_eq!(Array::from(&get(&stub, "seen")).length(), 2);
    }
}
