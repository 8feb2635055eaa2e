//! Browser tests of what a page's checkouts share: one BroadcastChannel (making one per
//! checkout slowed every `Checkout.open`), on which they still hear each other. Against
//! the real reference server.
#![cfg(target_arch = "wasm32")]

mod support;

use idemkey::Checkout;
use support::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn the_checkouts_of_a_page_share_one_channel_and_hear_each_other() {
    let t = Case::new("chan");
    let stop = count_channels();
    let (a, _) = t.open("{}");
    let (b, ev) = t.open("{}");
    let others: Vec<Checkout> = (0..3)
        .map(|_| open(&opts(&uniq("chan"), "nobody", "{}")))
        .collect();
    let made = stop.call0(&JsValue::UNDEFINED).unwrap().as_f64().unwrap();
    assert!(made <= 1.0, "{made} BroadcastChannels for 5 checkouts");
    let r = pay(&a).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    // No `storage` event reaches the page that wrote: b can only hear it on the channel.
    assert!(
        until(|| b.state() == "succeeded", 10_000.0).await,
        "b never heard of the success: {:?}",
        types(&ev)
    );
    assert_eq!(b.key(), text(&r, "key"));
    for c in others {
        c.finish();
    }
    a.finish();
}
