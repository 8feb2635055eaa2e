//! Browser tests of the scope's lock: with the storage-lease fallback (Web Locks hidden)
//! the holder keeps its lease alive for as long as a try takes, and a lease whose tab died
//! lapses instead of blocking the scope for good; an attempt abandoned between two tries
//! stops and frees the scope; a submit whose answer is stored resolves without waiting for
//! the lock, and not after a finish() of its own page; one made as the first resolves gets
//! the stored answer too, and the lock goes once IndexedDB holds it. Against the real
//! reference server.
#![cfg(target_arch = "wasm32")]

mod support;

use idemkey::core::record::{Record, StoredResponse};
use idemkey::core::state::State;
use js_sys::{Array, Function};
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The `until` time (ms) of the lease stored at `key`, if any.
fn lease_until(key: &str) -> Option<f64> {
    let v = local().get_item(key).unwrap()?;
    v.rsplit_once('|')?.1.parse().ok()
}

// P-lock-or-lease: the lease is renewed while its tab's try runs
#[wasm_bindgen_test]
async fn the_lease_is_renewed_while_a_long_try_is_in_flight() {
    let (c, customer, ev) = checkout("{}");
    let lk = format!("idemkey:lease:{}", c.scope());
    fault(&customer, "delay-after-commit", 1, 3000).await;
    let undo = hide_locks();
    let p = c.submit(js(PAY));
    wait_events(&ev, "attempt", 1).await;
    restore(&undo);
    let first = lease_until(&lk).expect("the holder stored a lease");
    // A try may outlast the lease (timeoutMs defaults to the lease's 10 s): renewed only
    // between tries, it would lapse mid-request and let another tab send with the key.
    let renewed = until(|| lease_until(&lk).is_some_and(|u| u > first), 2500.0).await;
    let r = JsFuture::from(p).await.unwrap();
    assert!(renewed, "the lease was not renewed during a 3 s try");
    assert_eq!(num(&r, "status"), 201.0);
    // Released once IndexedDB has the answer, which may be just after the submit resolves.
    let released = until(|| lease_until(&lk).is_none(), 5000.0).await;
    assert!(released, "the lease was not released after the submit");
    // The renewal timer stopped with the guard: nothing writes the lease back.
    sleep(1200).await;
    assert_eq!(
        lease_until(&lk),
        None,
        "the renewal timer outlived the lock"
    );
    assert_eq!(ledger(&customer).await.len(), 1);
    c.finish();
}

// P-lock-or-lease: a lease left by a closed tab lapses
#[wasm_bindgen_test]
async fn a_lease_left_by_a_closed_tab_lapses_and_the_submit_goes_ahead() {
    let (c, customer, ev) = checkout("{}");
    let lk = format!("idemkey:lease:{}", c.scope());
    // A tab that took the lease and was closed: nobody will renew or remove it.
    let until_ms = js_sys::Date::now() + 600.0;
    local()
        .set_item(&lk, &format!("closed-tab|{}", until_ms as u64))
        .unwrap();
    let undo = hide_locks();
    let r = submit(&c, &js(PAY)).await;
    restore(&undo);
    let r = r.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    let (_, sent_at) = timed_events_of(&ev, "attempt")[0];
    assert!(
        sent_at >= until_ms,
        "sent at {sent_at}, while the dead tab's lease held until {until_ms}"
    );
    let released = until(|| lease_until(&lk).is_none(), 5000.0).await;
    assert!(released, "the lease was not released after the submit");
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

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
    let release: Function = JsFuture::from(hold_lock(&name)).await.unwrap().into();
    let p = c.submit(js(PAY));
    let got = JsFuture::from(within(&p, 10_000.0)).await.unwrap();
    release.call0(&JsValue::UNDEFINED).unwrap();
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

// P-gives-up-only-seen: a reset() that finds another tab's newer attempt stored keeps that one and shows it
#[wasm_bindgen_test]
async fn reset_keeps_a_newer_attempt_another_tab_stored_meanwhile() {
    let t = Case::new("seen");
    let (c, _ev) = t.open("{}");
    t.wait_stored().await;
    let k1 = c.key();
    // Another tab holds the scope: the reset waits for its turn.
    let name = format!("idemkey:{}", t.key());
    let release: Function = JsFuture::from(hold_lock(&name)).await.unwrap().into();
    c.reset();
    let k2 = c.key();
    assert_ne!(k2, k1, "the new key shows at once");
    // Meanwhile that tab moved the scope to an attempt of its own and sent its key.
    let theirs = record_of(&t.scope, State::Pending, 2, 0.0);
    idb_put(&t.key(), &theirs.encode()).await;
    local().set_item(&t.key(), &theirs.encode()).unwrap();
    release.call0(&JsValue::UNDEFINED).unwrap();
    assert!(
        until(|| c.key() == theirs.key, 5000.0).await,
        "the reset did not give way to the other tab's attempt: shows {}",
        c.key()
    );
    assert_eq!(c.state(), "pending");
    let stored = Record::decode(&idb_get(&t.key()).await.unwrap()).unwrap();
    assert_eq!(stored.key, theirs.key, "the newer attempt was replaced");
    // Its key is the one a submit of its payload goes on with.
    let r = pay(&c).await.unwrap();
    assert_eq!(text(&r, "key"), theirs.key);
    assert_eq!(t.ledger().await, vec![theirs.key.clone()]);
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

// P-deadline: waiting for another tab's lock does not count against deadlineMs
#[wasm_bindgen_test]
async fn the_deadline_does_not_count_the_wait_for_another_tabs_lock() {
    let (c, customer, ev) = checkout(r#"{"deadlineMs":1000}"#);
    let name = format!("idemkey:{}", record_key("idemkey", &c.scope()));
    let release: Function = JsFuture::from(hold_lock(&name)).await.unwrap().into();
    let p = c.submit(js(PAY));
    // Another tab holds the scope for longer than the whole deadline.
    sleep(1500).await;
    assert!(
        events_of(&ev, "attempt").is_empty(),
        "sent under another tab's lock"
    );
    release.call0(&JsValue::UNDEFINED).unwrap();
    let r = JsFuture::from(p)
        .await
        .expect("the deadline ran while it waited");
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}
