//! Browser tests of the scope's lock (a Web Lock): an attempt abandoned between two tries
//! stops and frees the scope; a submit whose answer is stored resolves without waiting for
//! the lock, and not after a finish() of its own page; one made as the first resolves gets
//! the stored answer too, and the lock goes once IndexedDB holds it. Against the real
//! reference server.

use crate::support::*;
use idemkey::core::record::{Record, StoredResponse};
use idemkey::core::state::State;
use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

// P-abandoned: reset() between tries stops the submit (outcome-unknown, abandoned); the next submit uses the new key
#[wasm_bindgen_test]
async fn reset_between_tries_stops_the_old_attempt_and_frees_the_scope() {
    let (c, customer, ev) = checkout("{}");
    let old = c.key();
    // Each 503 asks for a 1 s wait: time enough to reset between the first and second try.
    schedule(
        &customer,
        r#"{"mode":"respond","count":3,"status":503,"retry_after":"1"}"#,
    )
    .await;
    let p = c.submit(js(PAY));
    wait_events(&ev, "retry", 1).await;
    c.reset();
    let e = JsFuture::from(p).await.unwrap_err();
    assert_idem_error(&e, "outcome-unknown", "abandoned");
    assert_eq!(
        events_of(&ev, "attempt").len(),
        1,
        "the old key was re-sent"
    );
    let f = faults(&customer).await;
    assert_eq!(
        num(
            &js_sys::Array::from(&get(&f, "scheduled")).get(0),
            "remaining"
        ),
        2.0,
        "one request reached the server"
    );
    // The new attempt goes ahead with its own key.
    schedule(&customer, r#"{"mode":"none"}"#).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert_ne!(text(&r, "key"), old);
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

// P-cached-no-lock: a stored answer resolves while another tab holds the lock
#[wasm_bindgen_test]
async fn a_stored_success_answers_while_another_tab_holds_the_scope_lock() {
    let (c, customer, _ev) = checkout("{}");
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    // Another tab holds the scope's lock (a submit of its own, a reset waiting for its
    // turn): resolving with the stored answer changes nothing, so it does not wait.
    let name = format!("idemkey:{}", record_key("idemkey", &c.scope()));
    let other = Tab::open().await;
    let release = other.hold_lock(&name).await;
    let p = c.submit(js(PAY));
    let got = JsFuture::from(within(&p, 10_000.0)).await.unwrap();
    release.call0(&JsValue::UNDEFINED).unwrap();
    other.close();
    assert!(
        !got.is_null(),
        "the cached submit waited for the other tab's lock"
    );
    let again = js_sys::Array::from(&got).get(0);
    assert!(flag(&again, "fromCache"));
    assert_eq!(text(&again, "key"), text(&r, "key"));
    assert_eq!(ledger(&customer).await.len(), 1);
    c.finish();
}

#[wasm_bindgen_test]
async fn a_submit_right_after_finish_sends_the_next_attempt_not_the_stored_answer() {
    let (c, customer, _ev) = checkout("{}");
    let r1 = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(num(&r1, "status"), 201.0);
    // finish() has not had its turn with the lock yet: the stored success is still there,
    // but it is no longer this page's answer.
    c.finish();
    let r2 = submit(&c, &js(PAY)).await.unwrap();
    assert!(!flag(&r2, "fromCache"), "{r2:?}");
    assert_ne!(text(&r2, "key"), text(&r1, "key"));
    assert_eq!(ledger(&customer).await.len(), 2);
    c.finish();
}

// P-answer-then-lock: the next lock holder reads the answer in IndexedDB
#[wasm_bindgen_test]
async fn a_submit_made_as_the_first_resolves_gets_the_stored_answer() {
    let (c, customer, _ev) = checkout("{}");
    let rk = record_key("idemkey", &c.scope());
    let c: JsValue = c.into();
    let both = Array::from(&JsFuture::from(submit_twice(&c, &js(PAY))).await.unwrap());
    let (first, again) = (both.get(0), both.get(1));
    assert_eq!(num(&first, "status"), 201.0, "{first:?}");
    assert!(flag(&again, "fromCache"), "{again:?}");
    assert_eq!(text(&again, "key"), text(&first, "key"));
    // The lock goes once IndexedDB has the answer: the next holder reads it there.
    let name = format!("idemkey:{rk}");
    let release: Function = JsFuture::from(hold_lock(&name)).await.unwrap().into();
    let stored = idb_get(&rk).await.map(|t| Record::decode(&t).unwrap());
    release.call0(&JsValue::UNDEFINED).unwrap();
    assert_eq!(stored.map(|r| r.state), Some(State::Succeeded));
    assert_eq!(ledger(&customer).await, vec![text(&first, "key")]);
    Function::from(get(&c, "finish")).call0(&c).unwrap();
}

/// A record of `scope` for [`PAY`], in `state`, at `rev`, made `age_ms` ago, as a tab stores it.
fn record_of(scope: &str, state: State, rev: u64, age_ms: f64) -> Record {
    let mut r = Record::new(new_key(), scope, js_sys::Date::now() - age_ms, 86_400_000.0);
    r.state = state;
    r.rev = rev;
    r.attempts = 1;
    r.fingerprint = Some(idemkey::core::fingerprint::fingerprint(PAY).unwrap());
    r
}

// P-gives-up-only-seen: a reset() gives up only the attempt it saw: a newer attempt another tab stored meanwhile stays, is shown, and its payload goes on with its key
#[wasm_bindgen_test]
async fn reset_keeps_a_newer_attempt_another_tab_stored_meanwhile() {
    let t = Case::new("seen");
    let (c, _ev) = t.open("{}");
    let k1 = c.key();
    // Another tab holds the scope (its submit of its own).
    let name = format!("idemkey:{}", t.key());
    let other = Tab::open().await;
    let release = other.hold_lock(&name).await;
    assert!(c.reset(), "reset() said its end is not durable");
    let k2 = c.key();
    assert_ne!(k2, k1, "the new key shows at once");
    // Meanwhile that tab moved the scope to an attempt of its own and sent its key: its
    // writes reach this page as they would (IndexedDB, then its localStorage copy).
    let theirs = record_of(&t.scope, State::Pending, 2, 0.0);
    idb_put(&t.key(), &theirs.encode()).await;
    other.local().set_item(&t.key(), &theirs.encode()).unwrap();
    release.call0(&JsValue::UNDEFINED).unwrap();
    assert!(
        until(|| c.key() == theirs.key, 5000.0).await,
        "the other tab's attempt is not shown: shows {}",
        c.key()
    );
    assert_eq!(c.state(), "pending");
    // Its key is the one a submit of its payload goes on with; nothing replaced it.
    let r = pay(&c).await.unwrap();
    assert_eq!(text(&r, "key"), theirs.key);
    assert_eq!(t.ledger().await, vec![theirs.key.clone()]);
    let stored = Record::decode(&idb_get(&t.key()).await.unwrap()).unwrap();
    assert_eq!(stored.key, theirs.key, "the newer attempt was replaced");
    other.close();
    c.finish();
}

// P-answer-then-lock: a localStorage copy ahead of IndexedDB (its page closed in between) is what the next holder goes on from
#[wasm_bindgen_test]
async fn the_next_holder_goes_on_from_a_local_storage_copy_ahead_of_indexeddb() {
    let t = Case::new("ahead");
    // A page stored the pending try in IndexedDB, then its answer in localStorage, and was
    // closed before IndexedDB had the answer too.
    let pending = record_of(&t.scope, State::Pending, 2, 1000.0);
    let mut answered = pending.clone();
    answered.state = State::Succeeded;
    answered.rev = 3;
    answered.response = Some(StoredResponse {
        status: 201,
        body: r#"{"id":"ch_from_the_closed_page"}"#.into(),
        replayed: false,
    });
    idb_put(&t.key(), &pending.encode()).await;
    local().set_item(&t.key(), &answered.encode()).unwrap();
    let (c, ev) = t.open("{}");
    let r = pay(&c).await.unwrap();
    assert!(flag(&r, "fromCache"), "{r:?}");
    assert_eq!(text(&r, "key"), pending.key);
    assert_eq!(text(&field(&r, "body"), "id"), "ch_from_the_closed_page");
    assert!(events_of(&ev, "attempt").is_empty(), "sent again");
    assert_eq!(c.state(), "succeeded");
    assert!(t.ledger().await.is_empty(), "charged");
    c.finish();
}

// P-wait-bounded: a tab kept waiting by another tab's lock rejects within its deadline: another-tab, nothing sent
#[wasm_bindgen_test]
async fn a_submit_kept_waiting_by_another_tabs_lock_ends_at_its_deadline_with_nothing_sent() {
    let (c, customer, ev) = checkout(r#"{"deadlineMs":1000}"#);
    let name = format!("idemkey:{}", record_key("idemkey", &c.scope()));
    let other = Tab::open().await;
    let release = other.hold_lock(&name).await;
    // Another tab holds the scope for longer than the whole deadline (frozen, say).
    let began = js_sys::Date::now();
    let err = JsFuture::from(c.submit(js(PAY)))
        .await
        .expect_err("resolved while another tab held the lock");
    let waited = js_sys::Date::now() - began;
    assert_eq!(text(&err, "code"), "outcome-unknown");
    assert_eq!(text(&err, "reason"), "another-tab");
    assert!(
        (900.0..3000.0).contains(&waited),
        "settled after {waited} ms"
    );
    assert!(
        events_of(&ev, "attempt").is_empty(),
        "sent under another tab's lock"
    );
    release.call0(&JsValue::UNDEFINED).unwrap();
    other.close();
    // The other tab is done: the customer presses Pay again and is charged once.
    let r = JsFuture::from(c.submit(js(PAY))).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}
