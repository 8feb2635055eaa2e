//! Browser tests of a page without Web Locks (`navigator.locks` removed before the scope
//! opens, as on an insecure `http://` origin): the record is the tab's own, as with
//! `storage: "session"`, and one `storage-fallback` event says so; a double-click, the
//! retries and a reload of the tab keep one key and one charge. Against the real reference
//! server, in every engine the suite runs in.

use crate::support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

// P-no-web-locks-own-tab: without Web Locks, local acts as session, with one storage-fallback event naming Web Locks; a double-click and a reload of the tab keep one key and one charge
#[wasm_bindgen_test]
async fn without_web_locks_the_record_is_the_tabs_own_and_a_reload_keeps_its_key() {
    let customer = uniq("cust");
    let scope = uniq("cart");
    let tab = Tab::open().await;
    let undo = hide_locks_in(&tab.window());
    let o = opts(&scope, &customer, FAST);
    let (c, ev) = tab.checkout_recorded(&o);
    let falls: Vec<JsValue> = events_of(&ev, "storage-fallback");
    assert_eq!(falls.len(), 1, "{falls:?}");
    assert_eq!(text(&falls[0], "from"), "local");
    assert_eq!(text(&falls[0], "to"), "session");
    assert!(text(&falls[0], "reason").contains("Web Locks"), "{falls:?}");
    assert_eq!(
        tab_get(&c, "storage").as_string().as_deref(),
        Some("session")
    );
    let key = tab_get(&c, "key").as_string().unwrap();
    // The first answer is dropped after the server committed: the retry replays it.
    schedule(&customer, r#"{"mode":"drop-after-commit","count":1}"#).await;
    // A double-click: one request sequence.
    let (p1, p2) = (tab_submit(&c, &js(PAY)), tab_submit(&c, &js(PAY)));
    let (r1, r2) = (
        JsFuture::from(p1).await.unwrap(),
        JsFuture::from(p2).await.unwrap(),
    );
    assert_eq!(text(&r1, "key"), key);
    assert_eq!(text(&r2, "key"), key);
    assert_eq!(num(&r1, "status"), 201.0, "{r1:?}");
    assert_eq!(ledger(&customer).await, vec![key.clone()], "one charge");
    restore(&undo);
    tab.close();
    // The reload: a new page of the same tab (its sessionStorage), without Web Locks too.
    reload_shows_and_answers(&scope, &customer, &key, hide_locks_in).await;
}

/// A reload of the tab that paid `key` (a new page with its sessionStorage, `hide` taking
/// from it what the paying page lacked): it shows the key, succeeded, and a submit is
/// answered from the stored answer, still one charge.
async fn reload_shows_and_answers(
    scope: &str,
    customer: &str,
    key: &str,
    hide: fn(&JsValue) -> js_sys::Function,
) {
    let again = Tab::open().await;
    let undo = hide(&again.window());
    let back = again.open_checkout(&opts(scope, customer, "{}"));
    assert_eq!(back.key(), key, "the reload shows the tab's key");
    assert_eq!(back.state(), "succeeded");
    let r = back.submit(&js(PAY)).await;
    assert_eq!(get(&r, "fromCache").as_bool(), Some(true), "{r:?}");
    assert_eq!(
        ledger(customer).await,
        vec![key.to_string()],
        "still one charge"
    );
    restore(&undo);
    again.close();
}

// P-safari-15-own-tab: a page of Safari 15.0 to 15.3 (no Web Locks, no BroadcastChannel, no Object.hasOwn) keeps its tab's key and answer across a reload
#[wasm_bindgen_test]
async fn a_page_of_safari_15_0_to_15_3_keeps_its_tabs_key_and_answer_across_a_reload() {
    let customer = uniq("cust");
    let scope = uniq("cart");
    let tab = Tab::open().await;
    let undo = hide_safari_15_in(&tab.window());
    let c = tab.open_checkout(&opts(&scope, &customer, FAST));
    assert_eq!(c.storage(), "session");
    let key = c.key();
    let r = c.submit(&js(PAY)).await;
    assert_eq!(num(&r, "status"), 201.0, "{r:?}");
    assert_eq!(ledger(&customer).await, vec![key.clone()], "one charge");
    restore(&undo);
    tab.close();
    // The reload: it reads the record the first page stored, in the same browser.
    reload_shows_and_answers(&scope, &customer, &key, hide_safari_15_in).await;
}
