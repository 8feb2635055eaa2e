//! Browser tests with IndexedDB broken on purpose by page JS: missing, failing to open or
//! to run a transaction, out of quota in the middle of a submit or for the answer alone.
//! Each ends in a defined state with a `storage-fallback` event, against the real
//! reference server: the pending key is kept and, once IndexedDB is back, nothing is sent
//! again with a new key.

use crate::support::*;
use idemkey::core::record::Record;
use idemkey::core::state::State;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

// P-no-indexeddb: without IndexedDB, a storage-fallback event and the pending key kept in localStorage
// P-indexeddb-back: once IndexedDB is back, the success stays and nothing is sent
#[wasm_bindgen_test]
async fn indexeddb_unavailable_keeps_the_pending_key_in_local_storage() {
    let t = case("no-idb");
    hide_indexed_db(&JsValue::UNDEFINED);
    let k = unknown_outcome(&t).await;
    // A reload, still without IndexedDB: the key whose outcome is unknown is resumed. (A
    // page, not this one: this page keeps what its last submit left unknown, and was told
    // of the fallback already.)
    let page = Tab::open().await;
    let undo = hide_indexed_db(&page.window());
    let (c, ev) = page.checkout_recorded(&opts(&t.scope, &t.customer, "{}"));
    assert_eq!(tab_get(&c, "key").as_string(), Some(k.clone()));
    let r = settled(tab_submit(&c, &js(PAY))).await;
    let (to, reason) = the_idb_fallback(&ev);
    assert_eq!(to, "local");
    assert!(reason.contains("IndexedDB unavailable"), "{reason}");
    assert_eq!(
        (text(&r, "key"), num(&r, "status")),
        (k.clone(), 201.0),
        "{r:?}"
    );
    assert!(flag(&r, "replayed"));
    restore(&undo);
    page.close();
    after_indexeddb_is_back(&t, &k).await;
}

// P-no-indexeddb: without IndexedDB, an answer localStorage has no room for leaves the order's key in localStorage
#[wasm_bindgen_test]
async fn without_indexeddb_an_answer_too_large_for_local_storage_leaves_the_key_to_the_other_tabs()
{
    let t = case("no-idb-quota");
    hide_indexed_db(&JsValue::UNDEFINED);
    let (c, ev) = t.open("{}");
    schedule_large_answer(&t.customer).await;
    quota_for_local_values(4 * 1024);
    let r = pay(&c).await;
    let copy = local().get_item(&t.key()).unwrap();
    repair();
    assert_eq!(num(&r.expect("resolves with the answer"), "status"), 200.0);
    assert_eq!(fallbacks(&ev), ["indexeddb -> local", "local -> session"]);
    // localStorage, the only copy the other tabs read, still holds this order's key: a tab
    // that pays the order next sends it again, and the server answers once.
    let copy = copy.expect("localStorage lost the order's key");
    let rec = idemkey::core::record::Record::decode(&copy).unwrap();
    assert_eq!(rec.key, c.key());
    // The order is over. finish() says its end is not durable: the other tabs read the
    // copy localStorage kept, and the end is in this tab's sessionStorage only
    // (P-end-not-durable). A later page of this tab reads it there: it shows a new key and
    // pays the same basket under it, never answered from the finished attempt.
    let k = c.key();
    assert!(
        !c.finish(),
        "finish() said its end is durable, though the other tabs read only the copy localStorage kept"
    );
    drop(c);
    let page = Tab::open().await;
    hide_indexed_db(&page.window());
    let next = page.open_checkout(&opts(&t.scope, &t.customer, "{}"));
    let charged = next.pays_anew(&k).await;
    assert_eq!(
        t.ledger().await,
        vec![charged],
        "one charge, the next order's"
    );
    next.finish();
    page.close();
}

// P-event-storage-reopened: a lost IndexedDB connection is opened again, the request made once more, with an event
#[wasm_bindgen_test]
async fn a_lost_indexeddb_connection_is_reopened_and_the_request_tried_once_more() {
    let t = case("idb-lost");
    let (c, ev) = t.open(FAST);
    // A first order, paid and finished, opened the page's IndexedDB connection.
    let first = text(&pay(&c).await.unwrap(), "key");
    assert!(c.finish(), "finish() said its end is not durable");
    let k = c.key();
    assert_ne!(k, first);
    // The browser loses its IndexedDB server (WebKit: "Connection to Indexed Database
    // server lost"): the page's connection is closed under the module.
    close_idb_connections();
    let r = pay(&c).await.expect("the submit goes on");
    assert_eq!((text(&r, "key"), num(&r, "status")), (k.clone(), 201.0));
    let fell: Vec<_> = events_of(&ev, "storage-fallback")
        .iter()
        .map(|e| text(e, "reason"))
        .collect();
    assert!(fell.is_empty(), "IndexedDB was given up: {fell:?}");
    let reopened = events_of(&ev, "storage-reopened");
    assert_eq!(reopened.len(), 1, "{:?}", types(&ev));
    assert_eq!(text(&reopened[0], "key"), k);
    assert_eq!(text(&reopened[0], "backend"), "indexeddb");
    assert!(!text(&reopened[0], "reason").is_empty());
    // IndexedDB, where every tab looks, holds the succeeded attempt under the same key.
    let stored = idb_get(&t.key()).await.expect("IndexedDB holds the record");
    let rec = idemkey::core::record::Record::decode(&stored).unwrap();
    assert_eq!((rec.key, rec.state), (k.clone(), State::Succeeded));
    let charged = t.ledger().await;
    assert!(charged.len() == 2 && charged.contains(&k), "{charged:?}");
    c.finish();
}

// P-no-indexeddb: an IndexedDB that fails: a storage-fallback event, the pending key kept
// P-indexeddb-back: IndexedDB back with an older copy: the success stays, nothing sent
#[wasm_bindgen_test]
async fn indexeddb_that_fails_to_open_or_to_run_a_transaction_keeps_the_pending_key() {
    let t = case("idb-fails");
    // IndexedDB holds the pending record, then starts failing.
    let k = unknown_outcome(&t).await;
    break_indexed_db(&JsValue::UNDEFINED);
    fail_idb_open();
    let (c, ev) = t.open("{}");
    assert_eq!(c.key(), k);
    let r = pay(&c).await;
    let (_, reason) = the_idb_fallback(&ev);
    // The transaction of open()'s sweep may have failed first, and the connection with it.
    assert!(
        ["no transactions", "no open"]
            .iter()
            .any(|e| reason.contains(e)),
        "{reason}"
    );
    let r = r.expect("the resumed submit gets the stored answer");
    assert_eq!((text(&r, "key"), num(&r, "status")), (k.clone(), 201.0));
    // Once the connection is gone, reopening it fails as well: in a page opened afterwards
    // (this page's checkout of the scope freed first, as a reload does; a checkout opened
    // while it is alive would be the same attempt, which knows IndexedDB failed).
    drop(c);
    let (again, ev) = t.open("{}");
    let cached = pay(&again).await.unwrap();
    assert!(flag(&cached, "fromCache"));
    let (_, reason) = the_idb_fallback(&ev);
    assert!(reason.contains("no open"), "{reason}");
    // IndexedDB comes back with its older copy (pending) of the attempt.
    after_indexeddb_is_back(&t, &k).await;
}

// P-indexeddb-back: IndexedDB out of quota mid-checkout: after a reload the success stays
#[wasm_bindgen_test]
async fn indexeddb_out_of_quota_in_the_middle_of_a_submit_keeps_the_answer() {
    for from_the_start in [false, true] {
        let t = case("idb-quota");
        let (o, ev) = t.opts(FAST);
        if from_the_start {
            quota_on_idb_put();
        }
        let c = open(&o);
        if !from_the_start {
            // IndexedDB holds the scope's record (a declined card's) when it fills up.
            t.declined(&c).await;
        }
        schedule(&t.customer, ONE_503).await;
        quota_on_idb_put();
        let r = pay(&c).await;
        let (to, reason) = the_idb_fallback(&ev);
        assert_eq!(to, "local");
        assert!(reason.contains("QuotaExceededError"), "{reason}");
        let r = r.expect("the submit goes on in localStorage");
        assert_eq!(num(&r, "status"), 201.0);
        assert_eq!((num(&r, "attempts"), c.state()), (2.0, "succeeded".into()));
        after_indexeddb_is_back(&t, &c.key()).await;
    }
}

// P-indexeddb-back: IndexedDB refusing the answer: after a reload the success stays
#[wasm_bindgen_test]
async fn indexeddb_refusing_only_the_answer_keeps_the_answer() {
    let t = case("idb-answer");
    let (c, ev) = t.open(FAST);
    // The write before the try lands; IndexedDB refuses the answer's, which the submit
    // does not wait for.
    fault(&t.customer, "delay-after-commit", 1, 500).await;
    let p = c.submit(js(PAY));
    wait_events(&ev, "attempt", 1).await;
    quota_on_idb_put();
    let r = JsFuture::from(p).await.expect("the submit resolves");
    assert_eq!(num(&r, "status"), 201.0);
    wait_events(&ev, "storage-fallback", 1).await;
    let (to, reason) = the_idb_fallback(&ev);
    assert_eq!(to, "local");
    assert!(reason.contains("QuotaExceededError"), "{reason}");
    let copy = t.stored().expect("the answer's copy");
    assert_eq!(
        (copy.state, copy.rev),
        (State::Succeeded, 0),
        "not marked as missed"
    );
    after_indexeddb_is_back(&t, &c.key()).await;
}

// P-idb-lost-record: a pending record IndexedDB lacks while localStorage keeps it is resumed; any other such record stays finished
#[wasm_bindgen_test]
async fn a_record_indexeddb_lacks_is_resumed_if_pending_and_stays_finished_otherwise() {
    // Pending: charged, its answer lost while IndexedDB was missing, so only localStorage
    // has it. IndexedDB comes back without it.
    let t = case("idb-lost");
    hide_indexed_db(&JsValue::UNDEFINED);
    let k = unknown_outcome(&t).await;
    repair();
    assert_eq!(idb_get(&t.key()).await, None);
    let (c, ev) = t.open("{}");
    let r = pay(&c)
        .await
        .expect("the resumed submit gets the stored answer");
    assert_eq!(text(&r, "key"), k, "a new key: {:?}", types(&ev));
    assert!(flag(&r, "replayed"));
    assert_eq!(t.ledger().await, vec![k.clone()], "charged once");
    c.finish();
    // Succeeded: a copy left in localStorage of a record IndexedDB no longer holds (an
    // earlier release's finish() removed it there, or the browser evicted it). That
    // attempt is over: the next order gets a new key.
    let t = case("idb-finished");
    let (c, _) = t.open("{}");
    let r = pay(&c).await.unwrap();
    let k = text(&r, "key");
    assert!(t.stored().is_some(), "the answer's copy");
    // The page is reloaded (this page's checkout of the scope freed first, as a reload
    // does) once IndexedDB lost the record.
    drop(c);
    idb_delete(&t.key()).await;
    assert_eq!(idb_get(&t.key()).await, None);
    let (again, _) = t.open("{}");
    let r = pay(&again).await.unwrap();
    assert!(
        !flag(&r, "fromCache"),
        "the finished attempt came back: {r:?}"
    );
    assert_ne!(text(&r, "key"), k);
    assert_eq!(t.ledger().await.len(), 2);
    again.finish();
}

// P-own-answer-kept: a page that paid answers its payload again from the answer it stored, once the origin's storage lost the record
#[wasm_bindgen_test]
async fn a_page_that_paid_answers_its_payload_again_after_storage_lost_the_record() {
    let t = case("own-answer-kept");
    let (c, _) = t.open("{}");
    let r = pay(&c).await.unwrap();
    let k = text(&r, "key");
    // The answer is in IndexedDB (the page holds the scope's lock until it is).
    let mut stored = None;
    for _ in 0..100 {
        stored = idb_get(&t.key()).await.map(|t| Record::decode(&t).unwrap());
        if stored.as_ref().is_some_and(|r| r.state == State::Succeeded) {
            break;
        }
        sleep(20).await;
    }
    assert_eq!(stored.map(|r| r.state), Some(State::Succeeded));
    // Then the origin's storage loses the record (a shop's script, the customer clearing
    // site data), and the customer presses Pay again on the paid order.
    idb_delete(&t.key()).await;
    local().remove_item(&t.key()).unwrap();
    let again = pay(&c).await.unwrap();
    assert!(flag(&again, "fromCache"), "{again:?}");
    assert_eq!(text(&again, "key"), k);
    assert_eq!(t.ledger().await, vec![k], "charged again");
    c.finish();
}

// P-paid-attempt-kept: a paid attempt's copy written without IndexedDB (no count) wins over an attempt of the same payload IndexedDB holds, whatever the clocks
#[wasm_bindgen_test]
async fn a_paid_copy_without_a_count_wins_over_an_unknown_attempt_of_its_payload() {
    use idemkey::core::record::StoredResponse;
    let t = case("paid-kept");
    let now = js_sys::Date::now();
    let fp = idemkey::core::fingerprint::fingerprint(PAY).unwrap();
    // A tab whose IndexedDB failed paid the basket: its record lives in localStorage
    // alone, with no count (rev 0), begun by its clock two seconds earlier.
    let mut paid = Record::new(new_key(), t.scope.as_str(), now - 2_000.0, 86_400_000.0);
    paid.state = State::Succeeded;
    paid.attempts = 1;
    paid.fingerprint = Some(fp.clone());
    paid.response = Some(StoredResponse {
        status: 201,
        body: r#"{"id":"paid"}"#.into(),
        replayed: false,
    });
    // IndexedDB still holds another tab's attempt of the same basket, stored but never
    // answered (its page died), begun later by that tab's clock.
    let mut unknown = Record::new(new_key(), t.scope.as_str(), now - 500.0, 86_400_000.0);
    unknown.state = State::Pending;
    unknown.attempts = 1;
    unknown.rev = 4;
    unknown.fingerprint = Some(fp);
    idb_put(&t.key(), &unknown.encode()).await;
    local().set_item(&t.key(), &paid.encode()).unwrap();
    let (c, _) = t.open("{}");
    let r = pay(&c).await.unwrap();
    assert_eq!(
        text(&r, "key"),
        paid.key,
        "went on from the unknown attempt: {r:?}"
    );
    assert!(flag(&r, "fromCache"), "{r:?}");
    assert_eq!(t.ledger().await, Vec::<String>::new(), "sent again");
    c.finish();
}

// P-failed-attempt-earlier: of two attempts the count cannot order, a failed one is taken for the earlier, whatever the clocks: the other's key is sent again, never a third
#[wasm_bindgen_test]
async fn an_uncounted_attempt_wins_over_a_failed_one_whatever_the_clocks() {
    let t = case("failed-earlier");
    let now = js_sys::Date::now();
    let fp = idemkey::core::fingerprint::fingerprint(PAY).unwrap();
    // A tab whose IndexedDB failed began an attempt of the basket and sent it: its record
    // lives in localStorage alone, with no count (rev 0), begun by its clock (set back
    // since) two seconds before the other.
    let mut pending = Record::new(new_key(), t.scope.as_str(), now - 2_000.0, 86_400_000.0);
    pending.state = State::Pending;
    pending.attempts = 1;
    pending.fingerprint = Some(fp);
    // IndexedDB still holds the order before's attempt, which the server refused.
    let other = idemkey::core::fingerprint::fingerprint(r#"{"amount":1}"#).unwrap();
    let mut failed = Record::new(new_key(), t.scope.as_str(), now, 86_400_000.0);
    failed.state = State::Failed;
    failed.attempts = 1;
    failed.rev = 2;
    failed.fingerprint = Some(other);
    idb_put(&t.key(), &failed.encode()).await;
    local().set_item(&t.key(), &pending.encode()).unwrap();
    let (c, _) = t.open("{}");
    let r = pay(&c).await.unwrap();
    assert_eq!(
        text(&r, "key"),
        pending.key,
        "went on from the failed attempt: {r:?}"
    );
    assert_eq!(t.ledger().await, vec![pending.key.clone()], "a third key");
    c.finish();
}

/// Two tabs without IndexedDB (or with one that fails) race on one scope.
async fn race_without_indexeddb(break_it: bool) {
    let tab = Tab::open().await;
    let w = tab.window();
    let undo = if break_it {
        (break_indexed_db(&JsValue::UNDEFINED), break_indexed_db(&w))
    } else {
        (hide_indexed_db(&JsValue::UNDEFINED), hide_indexed_db(&w))
    };
    let customer = uniq("cust");
    let scope = uniq("cart");
    let o = opts(&scope, &customer, "{}");
    fault(&customer, "delay-after-commit", 1, 500).await;
    let (a, a_ev) = tab.checkout_recorded(&o);
    let pa = tab_submit(&a, &js(PAY));
    wait_events(&a_ev, "attempt", 1).await;
    let (ob, b_ev) = recorded_opts(&scope, &customer, "{}");
    let b = open(&ob);
    let rb = submit(&b, &js(PAY)).await.unwrap();
    let ra = settled(pa).await;
    restore(&undo.0);
    restore(&undo.1);
    assert_eq!(num(&ra, "status"), 201.0, "{ra:?}");
    assert_eq!(text(&rb, "key"), text(&ra, "key"));
    assert!(flag(&rb, "fromCache"));
    assert_eq!(ledger(&customer).await, vec![text(&ra, "key")]);
    for ev in [&a_ev, &b_ev] {
        let fb = events_of(ev, "storage-fallback");
        assert!(!fb.is_empty(), "no storage-fallback event: {:?}", types(ev));
        assert_eq!(text(&fb[0], "from"), "indexeddb");
        assert_eq!(text(&fb[0], "to"), "local");
        let reason = text(&fb[0], "reason");
        let want = if break_it {
            "UnknownError"
        } else {
            "IndexedDB unavailable"
        };
        assert!(reason.contains(want), "{reason}");
    }
    assert_eq!(mirrored(&scope).unwrap().state, State::Succeeded);
    assert_eq!(idb_get(&record_key("idemkey", &scope)).await, None);
    tab.close();
    b.finish();
}

// P-no-indexeddb: without IndexedDB: a storage-fallback event from indexeddb; one charge
// P-event-storage-fallback: from indexeddb to local, with the reason
#[wasm_bindgen_test]
async fn without_indexeddb_the_record_lives_in_local_storage_and_charges_once() {
    race_without_indexeddb(false).await;
}

// P-no-indexeddb: an IndexedDB that fails: a storage-fallback event; one charge
#[wasm_bindgen_test]
async fn an_indexeddb_that_fails_falls_back_to_local_storage_and_charges_once() {
    race_without_indexeddb(true).await;
}
