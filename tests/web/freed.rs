//! Browser tests of a page that frees every `Checkout` of a scope (a component unmounted)
//! and opens the scope again: what its last submit left unknown stays the page's.

use crate::support::*;
use wasm_bindgen_test::*;

// P-submit-before-end: a page whose last submit ended outcome-unknown frees its Checkout; another tab ends that attempt and pays the basket anew; Pay from a Checkout opened again in the page belongs to the page's attempt, whose record is gone: outcome-unknown (abandoned), nothing sent, never the other payment's answer
#[wasm_bindgen_test]
async fn a_checkout_opened_again_after_free_keeps_the_pages_unknown_attempt() {
    let t = case("freed-unknown");
    // Its Checkout is freed as the helper returns.
    let k1 = unknown_outcome(&t).await;
    let tab = Tab::open().await;
    let b = tab.open_checkout(&opts(&t.scope, &t.customer, "{}"));
    assert_eq!(b.key(), k1);
    assert!(b.finish(), "finish() said its end is not durable");
    let k2 = b.key();
    let paid = b.submit(&js(PAY)).await;
    assert_eq!(
        (text(&paid, "key"), num(&paid, "status")),
        (k2.clone(), 201.0)
    );
    let (c, _) = t.open("{}");
    let e = pay(&c)
        .await
        .expect_err("answered with the next order's payment");
    assert_idem_error(&e, "outcome-unknown", "");
    assert_eq!(get(&e, "reason").as_string().as_deref(), Some("abandoned"));
    let mut charged = t.ledger().await;
    charged.sort();
    let mut want = vec![k1, k2];
    want.sort();
    assert_eq!(charged, want, "one charge an attempt");
    tab.close();
}
