//! Browser test of two Pays of different baskets in one page while another tab's end stops
//! the first: the one that ends without an answer last is the page's last submit, and Pay
//! pressed again for its basket resumes its attempt.

use crate::support::*;
use js_sys::{Array, Promise};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

/// Whether `p` has not settled yet: a race with a promise resolved now, which `p` wins only
/// if it has.
async fn unsettled(p: &Promise) -> bool {
    let now = Promise::resolve(&JsValue::from_str("unsettled"));
    let first = settled(Promise::race(&Array::of2(p, &now))).await;
    first.as_string().as_deref() == Some("unsettled")
}

/// Tab A pays the basket and is told to retry in 2 s; this tab's reset() ends that attempt,
/// which stops A's submit before its next try; before it ends, A presses Pay for another
/// basket, whose deadline runs out first while it waits for A's turn. A's first submit then
/// ends outcome-unknown (abandoned), the last of the two: Pay pressed again for the first
/// basket goes on under its attempt's key, never a new one.
// P-submit-before-end: a Pay another tab's end stopped, ending after another basket's, resumes
#[wasm_bindgen_test]
async fn pay_again_for_a_basket_stopped_by_another_tab_after_another_baskets_pay_keeps_its_key() {
    let tab = Tab::open().await;
    let customer = uniq("cust");
    let scope = uniq("cart");
    let o = opts(&scope, &customer, "{}");
    schedule(
        &customer,
        r#"{"mode":"respond","count":1,"status":503,"retry_after":"2"}"#,
    )
    .await;
    let (a, a_ev) = tab.checkout_recorded(&o);
    let pa = tab_submit(&a, &js(PAY));
    wait_events(&a_ev, "retry", 1).await;
    let b = open(&o);
    let k1 = b.key();
    assert!(b.reset(), "reset() said its end is not durable");
    assert!(
        until(|| tab_get(&a, "key").as_string().unwrap() != k1, 5000.0).await,
        "tab A still shows the attempt reset() ended"
    );
    let quick = tab.checkout(&opts(&scope, &customer, r#"{"deadlineMs":200}"#));
    let other = settled(tab_submit(&quick, &js(OTHER))).await;
    assert_eq!(text(&other, "error"), "outcome-unknown", "{other:?}");
    assert!(
        unsettled(&pa).await,
        "the first Pay ended before the other basket's"
    );
    let ra = settled(pa).await;
    assert_eq!(text(&ra, "error"), "outcome-unknown", "{ra:?}");
    let again = settled(tab_submit(&a, &js(PAY))).await;
    assert_eq!(
        (text(&again, "key"), num(&again, "status")),
        (k1.clone(), 201.0),
        "{again:?}"
    );
    assert_eq!(
        ledger(&customer).await,
        vec![k1],
        "one charge, under the first key"
    );
    tab.close();
    b.finish();
}
