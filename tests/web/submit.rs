//! Browser tests of `submit()` against the real reference server (started by
//! scripts/wasm-test.sh): one charge per attempt through double-clicks, refreshes and
//! tabs; stored results, payload conflicts, declines. What each try sends is request.rs.

use crate::support::*;
use js_sys::Array;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

// P-json-body: the payload goes as the JSON body, with the key
// P-final-resolves: a 201 resolves ok and makes the state succeeded
// P-events-carry-key: every event carries type and key
// P-event-attempt: an attempt event before the try, counting tries
// P-event-response: a response event with attempt, status and replayed
// P-event-state: state events pending then succeeded, with previous
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
    // The server read the payload from the JSON body.
    assert_eq!(
        (num(&body, "amount"), text(&body, "currency")),
        (4200.0, "eur".to_string())
    );
    assert_eq!(c.state(), "succeeded");
    assert_eq!(c.attempts(), 1);
    assert_eq!(ledger(&customer).await, vec![key.clone()]);
    assert_eq!(types(&ev), ["state", "attempt", "response", "state"]);
    let events: Vec<_> = Array::from(&get(&ev, "events")).iter().collect();
    assert!(
        events.iter().all(|e| text(e, "key") == key),
        "an event without this key: {events:?}"
    );
    assert_eq!(num(&events_of(&ev, "attempt")[0], "attempt"), 1.0);
    let response = &events_of(&ev, "response")[0];
    assert_eq!(
        (num(response, "attempt"), num(response, "status")),
        (1.0, 201.0)
    );
    assert!(!flag(response, "replayed"));
    let states: Vec<String> = events_of(&ev, "state")
        .iter()
        .map(|e| text(e, "state"))
        .collect();
    assert_eq!(states, ["pending", "succeeded"]);
    let previous: Vec<String> = events_of(&ev, "state")
        .iter()
        .map(|e| text(e, "previous"))
        .collect();
    assert_eq!(previous, ["fresh", "pending"]);
    c.finish();
}

// P-refresh-finds-key: a refresh mid-request finds the key, pending; after the answer, succeeded
// P-succeeded-from-cache: after a refresh, submit(p) of a succeeded attempt is its stored result, fromCache
#[wasm_bindgen_test]
async fn the_record_is_stored_before_the_request_and_a_refresh_sees_it() {
    let (c, customer, ev) = checkout("{}");
    fault(&customer, "delay-after-commit", 1, 600).await;
    let key = c.key();
    let scope = c.scope();
    let p = c.submit(js(PAY));
    wait_events(&ev, "attempt", 1).await;
    // Mid-request: the record is pending with its key, for this tab and a refreshed one
    // (a new page, its own instance of the module, reading storage).
    assert_eq!(c.state(), "pending");
    let page = Tab::open().await;
    let refreshed = page.open_checkout(&opts(&scope, &customer, "{}"));
    assert_eq!(refreshed.key(), key);
    assert_eq!(refreshed.state(), "pending");
    assert_eq!(refreshed.attempts(), 1.0);
    page.close();
    let r = JsFuture::from(p).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    // After the answer, a page loaded afresh sees the outcome and gets it back without sending.
    drop(c);
    let page = Tab::open().await;
    let after = page.open_checkout(&opts(&scope, &customer, "{}"));
    assert_eq!(after.state(), "succeeded");
    let again = after.submit(&js(PAY)).await;
    assert!(flag(&again, "fromCache"), "{again:?}");
    assert_eq!(text(&again, "key"), key);
    assert_eq!(ledger(&customer).await.len(), 1);
    after.finish();
    page.close();
}

// P-one-sequence: two submit() calls in one page share one request sequence and one result
#[wasm_bindgen_test]
async fn a_double_click_shares_one_request_sequence() {
    let (c, customer, ev) = checkout("{}");
    fault(&customer, "delay-after-commit", 1, 300).await;
    let p1 = c.submit(js(PAY));
    let p2 = c.submit(js(PAY_REORDERED));
    let (r1, r2) = (
        JsFuture::from(p1).await.unwrap(),
        JsFuture::from(p2).await.unwrap(),
    );
    assert!(
        js_sys::Object::is(&r1, &r2),
        "both clicks resolve with the same result"
    );
    assert!(!flag(&r1, "fromCache"));
    assert_eq!(
        types(&ev).iter().filter(|t| *t == "attempt").count(),
        1,
        "one request sequence"
    );
    assert_eq!(ledger(&customer).await.len(), 1);
    c.finish();
}

// P-error-payload-conflict: another payload while pending: payload-conflict, nothing sent
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

/// Tab A (a second page of the origin) pays with its try held on the wire; this page, tab
/// B, submits the same payload meanwhile: it must wait for A's Web Lock and resolve with
/// A's stored result without sending.
async fn two_tabs() {
    let customer = uniq("cust");
    let scope = uniq("cart");
    let tab = Tab::open().await;
    let o = opts(&scope, &customer, "{}");
    let (a, ev_a) = tab.checkout_recorded(&o);
    let (ob, ev_b) = recorded_opts(&scope, &customer, "{}");
    // B shows a key of its own until A's submit stores A's.
    let b = open(&ob);
    fault(&customer, "delay-after-commit", 1, 400).await;
    let pa = tab_submit(&a, &js(PAY));
    // Tab A holds the scope and its try is out: B's submit must wait for it.
    wait_events(&ev_a, "attempt", 1).await;
    let pb = b.submit(js(PAY_REORDERED));
    let (ra, rb) = (JsFuture::from(pa).await, JsFuture::from(pb).await);
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert!(!flag(&ra, "fromCache"), "{ra:?}");
    assert!(
        flag(&rb, "fromCache"),
        "the waiting tab resolves with the stored result"
    );
    assert_eq!(text(&rb, "key"), text(&ra, "key"));
    assert_eq!(num(&rb, "status"), 201.0);
    assert_eq!(
        text(&field(&rb, "body"), "id"),
        text(&field(&ra, "body"), "id")
    );
    assert!(
        events_of(&ev_b, "attempt").is_empty(),
        "the waiting tab sent nothing"
    );
    assert_eq!(ledger(&customer).await.len(), 1);
    tab.close();
    b.finish();
}

// P-tabs-one-sender: the second checkout waits and sends nothing
// P-waiting-tab-from-cache: the checkout that waited resolves with the stored result, fromCache
// P-tabs-take-turns: with Web Locks the sequences of one scope never overlap
#[wasm_bindgen_test]
async fn a_second_tab_waits_on_the_web_lock_and_reads_the_stored_result() {
    two_tabs().await;
}

// P-succeeded-from-cache: submit(p) after success: the stored result, fromCache, nothing sent
// P-error-payload-conflict: another payload after success: payload-conflict until reset()
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
    assert_eq!(
        text(&field(&again, "body"), "id"),
        text(&field(&first, "body"), "id")
    );
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

// P-new-key-after-failed: after a failed attempt the next submit sends a new key
// P-final-resolves: a 402 resolves (not ok) and makes the state failed
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

// P-waiting-tab-from-cache: the waiting checkout resolves with the other's decline, fromCache
#[wasm_bindgen_test]
async fn a_second_tab_that_waited_gets_the_first_tabs_decline_without_a_new_key() {
    let customer = uniq("cust");
    let scope = uniq("cart");
    let tab = Tab::open().await;
    let (a, ev_a) = tab.checkout_recorded(&opts(&scope, &customer, "{}"));
    let (ob, ev_b) = recorded_opts(&scope, &customer, "{}");
    let b = open(&ob);
    fault(&customer, "delay-after-commit", 1, 400).await;
    let pa = tab_submit(&a, &js(DECLINED));
    wait_events(&ev_a, "attempt", 1).await;
    // Called while tab A's try is in flight: A's decline, stored after this call, is B's answer.
    let pb = b.submit(js(DECLINED));
    let ra = JsFuture::from(pa).await.unwrap();
    let rb = JsFuture::from(pb).await.unwrap();
    assert_eq!(num(&ra, "status"), 402.0);
    assert!(!flag(&ra, "fromCache"));
    assert_eq!(num(&rb, "status"), 402.0);
    assert!(
        flag(&rb, "fromCache"),
        "the waiting tab resolves with A's decline"
    );
    assert_eq!(
        text(&rb, "key"),
        text(&ra, "key"),
        "no new key for the same click"
    );
    assert!(
        events_of(&ev_b, "attempt").is_empty(),
        "the waiting tab sent nothing"
    );
    assert_eq!(b.state(), "failed");
    // A later submit is a new click: the server said no, so a new attempt with a new key.
    let r = submit(&b, &js(DECLINED)).await.unwrap();
    assert!(!flag(&r, "fromCache"));
    assert_ne!(text(&r, "key"), text(&ra, "key"));
    tab.close();
    b.finish();
}

// P-on-event-throws: what onEvent throws never breaks submit()
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
