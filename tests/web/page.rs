//! Browser tests of what a page's checkouts share and do once: one BroadcastChannel (making
//! one per checkout slowed every `Checkout.open`), on which they still hear each other, a
//! try's notice among them (posted once the try is on its way); a sweep of a namespace's
//! Web Storage at the first `open()` of the page; the endpoint and headers checked with
//! the browser once; and a finish() that asks the other tabs to stop sending its key only
//! while a tab may still be sending it. Against the real reference server.

use crate::support::*;
use idemkey::core::record::Record;
use js_sys::Array;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

/// The notice texts a [`listen_channel`] member has got so far.
fn seen(chan: &JsValue) -> Vec<String> {
    Array::from(&get(chan, "seen"))
        .iter()
        .filter_map(|m| m.as_string())
        .collect()
}

// P-tabs-follow-state: a checkout's state follows another's write at once
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

#[wasm_bindgen_test]
async fn a_second_checkout_of_the_page_hears_of_the_try_while_it_is_on_the_wire() {
    let t = Case::new("wire");
    // The server answers 1.5 s after its commit: the try is on the wire meanwhile.
    fault(&t.customer, "delay-after-commit", 1, 1500).await;
    let (a, _) = t.open("{}");
    let (b, ev) = t.open("{}");
    let done = js_sys::Promise::resolve(&a.submit(js(PAY)));
    let heard = until(|| b.state() == "pending", 10_000.0).await;
    let early = wasm_bindgen_futures::JsFuture::from(within(&done, 0.0))
        .await
        .unwrap();
    assert!(heard, "b never heard of the try: {:?}", types(&ev));
    assert!(
        early.is_null(),
        "the submit had resolved before b heard of its try"
    );
    let r = wasm_bindgen_futures::JsFuture::from(done).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(b.key(), text(&r, "key"));
    assert_eq!(t.ledger().await, vec![text(&r, "key")]);
    a.finish();
}

/// Whether a notice of the channel gives `key` up: `A`, the key, then the mark's times.
fn gives_up(seen: &[String], key: &str) -> bool {
    let head = format!("A{key} ");
    seen.iter().any(|n| n.starts_with(&head))
}

#[wasm_bindgen_test]
async fn finish_tells_the_tabs_it_gave_the_key_up_whatever_its_state() {
    let t = Case::new("fin");
    let chan = listen_channel(&t.key());
    let (c, _) = t.open("{}");
    let r = pay(&c).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0);
    let key = text(&r, "key");
    // Another tab shows the paid attempt.
    let other = Tab::open().await;
    let theirs = other.open_checkout(&opts(&t.scope, &t.customer, "{}"));
    assert_eq!(
        (theirs.key(), theirs.state()),
        (key.clone(), "succeeded".into())
    );
    assert!(c.finish(), "finish() said its end is not durable");
    // The mark goes to the other tabs by the channel, ahead of localStorage's own copy: a
    // paid key as well (a tab that has not heard must not answer from it).
    assert!(
        until(|| gives_up(&seen(&chan), &key), 10_000.0).await,
        "no abandon notice: {:?}",
        seen(&chan)
    );
    // The other tab follows: a new key, fresh.
    assert!(
        until(|| theirs.key() != key, 5000.0).await,
        "the other tab still shows the finished attempt"
    );
    assert_eq!(theirs.state(), "fresh");
    other.close();
    // And a key nobody has an answer for, which may be on its way in another tab.
    let (fresh, _) = t.open("{}");
    let next = fresh.key();
    fresh.finish();
    assert!(
        until(|| gives_up(&seen(&chan), &next), 10_000.0).await,
        "no abandon notice: {:?}",
        seen(&chan)
    );
}

#[wasm_bindgen_test]
fn open_sweeps_a_namespaces_web_storage_once_per_page() {
    let ns = &uniq("ws").replace('-', "")[..16];
    let now = js_sys::Date::now();
    let expired = |scope: &str| Record::new(new_key(), scope, now - 10_000.0, 1_000.0);
    let plant = |s: &web_sys::Storage, scope: &str| {
        let k = record_key(ns, scope);
        s.set_item(&k, &expired(scope).encode()).unwrap();
        k
    };
    let in_ns = |scope: &str, storage: &str| {
        let extra = format!(r#"{{"namespace":"{ns}","storage":"{storage}"}}"#);
        open(&opts(scope, "nobody", &extra))
    };
    let k1 = plant(&local(), "first");
    let a = in_ns("a", "local");
    assert_eq!(
        local().get_item(&k1).unwrap(),
        None,
        "the first open() did not sweep"
    );
    // The page has swept the namespace: another open() reads no key of the backend.
    let k2 = plant(&local(), "second");
    let b = in_ns("b", "local");
    assert!(
        local().get_item(&k2).unwrap().is_some(),
        "open() swept again"
    );
    // Another backend of the namespace is swept at its own first open().
    let k3 = plant(&session(), "third");
    let c = in_ns("c", "session");
    assert_eq!(
        session().get_item(&k3).unwrap(),
        None,
        "sessionStorage was not swept"
    );
    local().remove_item(&k2).unwrap();
    for c in [a, b, c] {
        c.finish();
    }
}

#[wasm_bindgen_test]
fn the_endpoint_and_headers_a_page_opened_with_are_checked_once() {
    let headers = format!(r#"{{"headers":{{"X-Customer-Id":"{}"}}}}"#, uniq("once"));
    let first = open(&opts(&uniq("once"), "nobody", &headers));
    let stop = count_requests();
    let again: Vec<Checkout> = (0..3)
        .map(|_| open(&opts(&uniq("once"), "nobody", &headers)))
        .collect();
    let other = open(&opts(&uniq("once"), "somebody", "{}"));
    let made = stop.call0(&JsValue::UNDEFINED).unwrap().as_f64().unwrap();
    assert_eq!(
        made, 1.0,
        "Requests made to check 3 known endpoints and 1 new one"
    );
    // What fetch refuses is refused at every open.
    for _ in 0..2 {
        let bad = opts(
            &uniq("once"),
            "nobody",
            r#"{"endpoint":"https://user:pw@example.com/pay"}"#,
        );
        let e = Checkout::open(bad)
            .err()
            .expect("an endpoint with credentials");
        assert_idem_error(&e, "invalid-options", "endpoint");
    }
    for c in again.into_iter().chain([first, other]) {
        c.finish();
    }
}

// P-error-freed: a freed Checkout throws the `freed` IdemError from every method and getter, and free() again does nothing
#[wasm_bindgen_test]
fn a_freed_checkout_says_so_and_frees_once() {
    let c: JsValue = open(&opts(&uniq("freed"), "nobody", "{}")).into();
    let r = used_after_free(&c);
    let used: Vec<JsValue> = Array::from(&get(&r, "used")).iter().collect();
    assert_eq!(used.len(), 10);
    for u in &used {
        let u = Array::from(u);
        let name = u.get(0).as_string().unwrap();
        assert_eq!(u.get(1).as_string().unwrap(), "IdemError", "{name}: {u:?}");
        assert_eq!(u.get(2).as_string().unwrap(), "freed", "{name}: {u:?}");
        let message = u.get(3).as_string().unwrap();
        assert!(message.contains("Checkout.open()"), "{name}: {message}");
    }
    assert_eq!(get(&r, "again").as_string().unwrap(), "", "a second free()");
}
