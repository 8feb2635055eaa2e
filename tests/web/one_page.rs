//! Browser tests of one page's truth about a scope, as a checkout page sees it: every
//! `Checkout` of a scope in a page shows the same key, state and attempts at every moment;
//! the key `open()` shows is the key that is sent, stored at once (a reload right after
//! `open()` finds it; a tab that opens meanwhile shows it); where two tabs race to open a
//! scope, one key wins before anything is sent and the loser is told; `finish()` and
//! `reset()` are final for the page as soon as they return. Real storage, locks and
//! channels, the real reference server.

use crate::support::*;
use wasm_bindgen_test::*;

/// The keys of a customer's charges, sorted (the ledger's order is not the point).
async fn charged(t: &Case) -> Vec<String> {
    let mut keys = t.ledger().await;
    keys.sort();
    keys
}

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort();
    keys
}

// P-open-same-key: two open() in one turn show one key; a submit through one is seen through the other at once
#[wasm_bindgen_test]
async fn two_checkouts_of_a_scope_opened_in_one_turn_show_one_key_and_one_state() {
    let t = Case::new("twice");
    // As React StrictMode's double effect does: two open() in the same turn.
    let (a, _) = t.open("{}");
    let (b, _) = t.open("{}");
    let k = a.key();
    assert_eq!(
        b.key(),
        k,
        "two open() of one scope in one page show two keys"
    );
    let r = pay(&a).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0, "{r:?}");
    assert_eq!(
        text(&r, "key"),
        k,
        "the key sent is not the key open() showed"
    );
    // At once, not after some notice: the two are one attempt.
    assert_eq!(
        b.state(),
        "succeeded",
        "b does not know the attempt succeeded"
    );
    assert_eq!(b.key(), k);
    assert_eq!(b.attempts(), a.attempts());
    let rb = pay(&b).await.unwrap();
    assert!(
        flag(&rb, "fromCache"),
        "b sent the paid order again: {rb:?}"
    );
    assert_eq!(charged(&t).await, vec![k]);
    a.finish();
    assert_eq!(a.key(), b.key(), "finish() through a is not seen through b");
    assert_eq!(b.state(), "fresh");
}

// P-open-same-key: a checkout opened after the first paid shows the paid attempt
#[wasm_bindgen_test]
async fn a_checkout_opened_after_the_first_one_paid_shows_the_paid_attempt() {
    let t = Case::new("later");
    let (a, _) = t.open("{}");
    let r = pay(&a).await.unwrap();
    let (b, _) = t.open("{}");
    assert_eq!(b.key(), text(&r, "key"));
    assert_eq!(b.state(), "succeeded");
    assert_eq!(b.attempts(), 1);
    b.finish();
}

// P-finish-final: open() right after finish() is a new order: new key, fresh, charged
// P-finish-durable: a page loaded right after finish() returned shows a new attempt, not the finished one
#[wasm_bindgen_test]
async fn an_order_opened_right_after_finish_is_a_new_order_and_is_charged() {
    let t = Case::new("next-order");
    let (q, _) = t.open("{}");
    let r1 = pay(&q).await.unwrap();
    assert_eq!(num(&r1, "status"), 201.0, "{r1:?}");
    let k1 = text(&r1, "key");
    q.finish();
    // Another page of the origin (its own instance of the module), loaded now.
    let other = Tab::open().await;
    let theirs = other.open_checkout(&opts(&t.scope, &t.customer, "{}"));
    assert_ne!(
        theirs.key(),
        k1,
        "a page loaded after finish() shows the finished attempt"
    );
    assert_eq!(theirs.state(), "fresh");
    other.close();
    let (q2, _) = t.open("{}");
    assert_ne!(
        q2.key(),
        k1,
        "the order opened after finish() shows the finished key"
    );
    assert_eq!(
        q2.state(),
        "fresh",
        "the order opened after finish() is not fresh"
    );
    let k2 = q2.key();
    let r2 = pay(&q2).await.unwrap();
    assert!(
        !flag(&r2, "fromCache"),
        "the new order was answered from the finished one's cache: {r2:?}"
    );
    assert_eq!(num(&r2, "status"), 201.0, "{r2:?}");
    assert_eq!(
        text(&r2, "key"),
        k2,
        "the key sent is not the key open() showed"
    );
    assert_eq!(charged(&t).await, sorted(vec![k1, k2]));
    q2.finish();
}

// P-reset-final: once reset() returns, every checkout of the page shows and sends the new key, kept in the page until a submit stores it
#[wasm_bindgen_test]
async fn a_submit_right_after_reset_sends_the_new_key_from_every_checkout_of_the_page() {
    let t = Case::new("reset-now");
    let (q, _) = t.open("{}");
    let r1 = pay(&q).await.unwrap();
    let k1 = text(&r1, "key");
    q.reset();
    let k2 = q.key();
    assert_ne!(k2, k1);
    // Like the key open() shows, it is kept in the page: another tab shows a key of its
    // own, and never the attempt reset() ended.
    let other = Tab::open().await;
    let theirs = other.open_checkout(&opts(&t.scope, &t.customer, "{}"));
    assert_ne!(
        theirs.key(),
        k1,
        "another tab shows the attempt reset() ended"
    );
    other.close();
    let (q2, _) = t.open("{}");
    assert_eq!(
        q2.key(),
        k2,
        "a checkout opened right after reset() shows the old key"
    );
    assert_eq!(q2.state(), "fresh");
    let r2 = submit(&q2, &js(r#"{"amount":999,"currency":"eur"}"#))
        .await
        .unwrap();
    assert!(!flag(&r2, "fromCache"), "{r2:?}");
    assert_eq!(text(&r2, "key"), k2);
    assert_eq!(charged(&t).await, sorted(vec![k1, k2]));
    q.finish();
}

// P-key-stable: open() stores nothing; a reload before the first Pay shows a new key, and Pay sends the key shown
#[wasm_bindgen_test]
async fn a_reload_before_the_first_pay_shows_a_new_key_and_pay_sends_the_key_shown() {
    let t = Case::new("reload-now");
    let o = opts(&t.scope, &t.customer, "{}");
    let first = Tab::open().await;
    let c = first.checkout(&o);
    let k = tab_get(&c, "key").as_string().unwrap();
    assert_eq!(
        local_entries_for(&t.scope),
        0,
        "open() stored something for the scope before any Pay"
    );
    first.close();
    let again = Tab::open().await;
    let c2 = again.checkout(&o);
    let k2 = tab_get(&c2, "key").as_string().unwrap();
    assert_ne!(
        k2, k,
        "a reload before any Pay showed the key of the page that went"
    );
    let r = settled(tab_submit(&c2, &js(PAY))).await;
    assert_eq!(num(&r, "status"), 201.0, "{r:?}");
    assert_eq!(
        text(&r, "key"),
        k2,
        "the key sent is not the key the page showed"
    );
    assert_eq!(charged(&t).await, vec![k2]);
    again.close();
}

// P-key-changed: a tab that opened the scope before another tab paid switches to the paid key, told once, and sends nothing
#[wasm_bindgen_test]
async fn a_tab_that_opened_before_another_tab_paid_switches_to_the_paid_key_and_is_told() {
    let t = Case::new("second-tab-now");
    let o = opts(&t.scope, &t.customer, "{}");
    let tab = Tab::open().await;
    let a = tab.checkout(&o);
    let ka = tab_get(&a, "key").as_string().unwrap();
    let (b, b_ev) = t.open("{}");
    let kb = b.key();
    assert_ne!(kb, ka, "two tabs opened before any Pay show one key");
    let ra = settled(tab_submit(&a, &js(PAY))).await;
    assert_eq!(text(&ra, "key"), ka, "{ra:?}");
    assert!(
        until(|| b.key() == ka, 5_000.0).await,
        "b still shows {} after a paid under {ka}",
        b.key()
    );
    let changed = events_of(&b_ev, "key-changed");
    assert_eq!(changed.len(), 1, "{:?}", types(&b_ev));
    assert_eq!(text(&changed[0], "key"), ka);
    assert_eq!(text(&changed[0], "previous"), kb);
    let r = pay(&b).await.unwrap();
    assert_eq!(text(&r, "key"), ka);
    assert!(flag(&r, "fromCache"), "{r:?}");
    assert_eq!(charged(&t).await, vec![ka]);
    tab.close();
    b.finish();
}

// P-key-changed: two tabs showing their own keys press Pay at once: one key is sent, the other tab is told before it sends
#[wasm_bindgen_test]
async fn when_two_tabs_press_pay_at_once_one_key_is_sent_and_the_other_tab_is_told() {
    let t = Case::new("race");
    let o = opts(&t.scope, &t.customer, "{}");
    let tab = Tab::open().await;
    let (a, a_ev) = tab.checkout_recorded(&o);
    let ka = tab_get(&a, "key").as_string().unwrap();
    let (b, b_ev) = t.open("{}");
    let kb = b.key();
    assert_ne!(kb, ka, "two tabs opened before any Pay show one key");
    // Which tab takes the scope's lock first is the browser's to decide (across two
    // frames); that one key is sent, and the other tab switches to it, is the promise.
    let pa = tab_submit(&a, &js(PAY));
    let rb = pay(&b).await.unwrap();
    let ra = settled(pa).await;
    let won = text(&rb, "key");
    assert_eq!(text(&ra, "key"), won, "a: {ra:?}, b: {rb:?}");
    assert!(won == ka || won == kb, "a third key: {won}");
    let (loser_ev, winner_ev, lost) = if won == ka {
        (&b_ev, &a_ev, &kb)
    } else {
        (&a_ev, &b_ev, &ka)
    };
    let changed = events_of(loser_ev, "key-changed");
    assert_eq!(changed.len(), 1, "{:?}", types(loser_ev));
    assert_eq!(text(&changed[0], "key"), won);
    assert_eq!(text(&changed[0], "previous"), *lost);
    assert!(events_of(winner_ev, "key-changed").is_empty());
    assert_eq!(charged(&t).await, vec![won]);
    tab.close();
    b.finish();
}

/// How many localStorage entries of the default namespace name `scope`.
fn local_entries_for(scope: &str) -> u32 {
    let s = local();
    let n = s.length().unwrap();
    (0..n)
        .filter_map(|i| s.key(i).unwrap())
        .filter(|k| k.starts_with("idemkey:") && k.ends_with(scope))
        .count() as u32
}

// P-open-same-key: each checkout sends with its own options and hears events until freed
#[wasm_bindgen_test]
async fn each_checkout_of_a_scope_sends_with_its_own_options_and_hears_until_freed() {
    let t = Case::new("own-options");
    let (a, a_ev) = t.open("{}");
    // Another customer's header: where b's submit goes is b's business.
    let other = uniq("cust");
    let (ob, b_ev) = recorded_opts(&t.scope, &other, "{}");
    let b = open(&ob);
    let r = pay(&b).await.unwrap();
    assert_eq!(num(&r, "status"), 201.0, "{r:?}");
    assert_eq!(
        ledger(&other).await,
        vec![b.key()],
        "b did not send its own headers"
    );
    assert!(t.ledger().await.is_empty(), "b sent a's headers");
    assert_eq!(events_of(&a_ev, "response").len(), 1, "{:?}", types(&a_ev));
    assert_eq!(events_of(&b_ev, "response").len(), 1, "{:?}", types(&b_ev));
    // a freed (free() in JS): its onEvent hears no more.
    drop(a);
    b.reset();
    pay(&b).await.unwrap();
    assert_eq!(events_of(&a_ev, "response").len(), 1, "{:?}", types(&a_ev));
    assert_eq!(events_of(&b_ev, "response").len(), 2, "{:?}", types(&b_ev));
    b.finish();
}
