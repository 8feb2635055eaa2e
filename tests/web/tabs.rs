//! Browser tests of two tabs on one scope: a second browsing context of the origin (a
//! frame with its own instance of the module), real storage, locks and channels, the real
//! reference server. One key in use per scope across tabs: the stored record wins over a
//! key a tab made up at open, the waiting tab resolves from the holder's stored result,
//! reset() and finish() in one tab stop the other tab's sequence before its next try (a try
//! on the wire is reported); a page's first open()
//! of a namespace sweeps IndexedDB; the `storage` event another tab fires keeps `checkout.state` current.
//! Two tabs without a working IndexedDB are in broken_indexeddb.rs.

use crate::support::*;
use idemkey::core::record::Record;
use idemkey::core::state::State;
use js_sys::Array;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

/// A second tab paying a new customer's scope, its first try out (`until`: "attempt") or
/// its first retry scheduled ("retry"), with `faults` (a `POST /api/faults` body) armed.
struct Paying {
    tab: Tab,
    customer: String,
    scope: String,
    /// The options both tabs open the scope with.
    o: JsValue,
    /// The tab's checkout, its events and its submit's outcome.
    a: JsValue,
    a_ev: js_sys::Function,
    pa: js_sys::Promise,
}

async fn paying(faults: &str, until: &str) -> Paying {
    let tab = Tab::open().await;
    let customer = uniq("cust");
    let scope = uniq("cart");
    let o = opts(&scope, &customer, "{}");
    schedule(&customer, faults).await;
    let (a, a_ev) = tab.checkout_recorded(&o);
    let pa = tab_submit(&a, &js(PAY));
    wait_events(&a_ev, until, 1).await;
    Paying {
        tab,
        customer,
        scope,
        o,
        a,
        a_ev,
        pa,
    }
}

/// Each 800 ms: time enough to act in the other tab while the try is on the wire.
const SLOW: &str = r#"{"mode":"delay-after-commit","count":1,"delay_ms":800}"#;

// P-waiting-tab-from-cache: the tab that waited resolves with the stored result, fromCache
// P-tabs-one-sender: two tabs: one charge, the waiting tab sends nothing
#[wasm_bindgen_test]
async fn the_tab_that_waited_resolves_from_the_other_tabs_stored_result() {
    let Paying {
        tab,
        customer,
        o,
        pa,
        ..
    } = paying(SLOW, "attempt").await;
    let b = open(&o);
    let rb = submit(&b, &js(PAY)).await.unwrap();
    let ra = settled(pa).await;
    assert_eq!(num(&ra, "status"), 201.0, "{ra:?}");
    assert_eq!(text(&rb, "key"), text(&ra, "key"));
    assert!(flag(&rb, "fromCache"), "{rb:?}");
    assert_eq!(ledger(&customer).await, vec![text(&ra, "key")]);
    assert_eq!(b.state(), "succeeded");
    tab.close();
    b.finish();
}

// P-tabs-one-key: the stored record's key is sent, not one made up at open()
#[wasm_bindgen_test]
async fn a_record_in_the_store_wins_over_a_key_made_at_open() {
    // Another tab stored K1 pending and sent it; its mirror write has not reached this tab,
    // which opens, sees nothing and makes up a key of its own.
    let customer = uniq("cust");
    let scope = uniq("cart");
    let k1 = new_key();
    let mut r = Record::new(
        k1.clone(),
        scope.as_str(),
        js_sys::Date::now(),
        86_400_000.0,
    );
    r.state = State::Pending;
    r.attempts = 1;
    r.rev = 2;
    let fp = idemkey::core::fingerprint::fingerprint(PAY).unwrap();
    r.fingerprint = Some(fp);
    let rk = record_key("idemkey", &scope);
    idb_put(&rk, &r.encode()).await;
    let (o, ev) = recorded_opts(&scope, &customer, "{}");
    let c = open(&o);
    let made_up = c.key();
    assert_ne!(made_up, k1);
    let res = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!(text(&res, "key"), k1, "sent the stored key");
    assert_eq!(ledger(&customer).await, vec![k1.clone()]);
    assert_eq!(c.key(), k1);
    let sent: Vec<String> = events_of(&ev, "attempt")
        .iter()
        .map(|e| text(e, "key"))
        .collect();
    assert_eq!(sent, vec![k1.clone()], "the made-up key never went out");
    let stored = Record::decode(&idb_get(&rk).await.unwrap()).unwrap();
    assert_eq!(
        (stored.key.as_str(), stored.state),
        (k1.as_str(), State::Succeeded)
    );
    c.finish();
}

// P-tabs-one-key: another tab opens the scope with the key stored
// P-option-storage: "local": the record is in IndexedDB and localStorage, and another tab opens it
#[wasm_bindgen_test]
async fn a_key_stored_in_one_tab_is_the_key_another_tab_opens_with() {
    let scope = uniq("cart");
    let o = opts(&scope, "nobody", "{}");
    let c = open(&o);
    // A submit stores the key it sends (a declined card: nothing charged).
    let r = submit(&c, &js(DECLINED)).await.unwrap();
    assert_eq!(text(&r, "key"), c.key());
    let rk = record_key("idemkey", &scope);
    assert_eq!(mirrored(&scope).map(|r| r.key), Some(c.key()));
    let stored = Record::decode(&idb_get(&rk).await.unwrap()).unwrap();
    assert_eq!(stored.key, c.key());
    let tab = Tab::open().await;
    let other = tab.checkout(&o);
    assert_eq!(tab_get(&other, "key").as_string().unwrap(), c.key());
    tab.close();
    c.finish();
}

// P-tabs-follow-state: the other tab's state and state events follow
// P-event-state: state events in the tab that did not submit
#[wasm_bindgen_test]
async fn the_other_tab_learns_the_result_from_a_notice() {
    let customer = uniq("cust");
    let scope = uniq("cart");
    let o = opts(&scope, &customer, "{}");
    let chan = listen_channel(&record_key("idemkey", &scope));
    let tab = Tab::open().await;
    let a = tab.checkout(&o);
    let (ob, ev) = recorded_opts(&scope, &customer, "{}");
    let b = open(&ob);
    let ra = settled(tab_submit(&a, &js(PAY))).await;
    assert_eq!(num(&ra, "status"), 201.0, "{ra:?}");
    wait_events(&ev, "state", 2).await;
    assert_eq!(b.state(), "succeeded");
    assert_eq!(b.key(), text(&ra, "key"));
    // b may have learnt it from the `storage` event first: the notice reaches this page's
    // own channel object in a task of its own.
    let last = || {
        let seen = Array::from(&get(&chan, "seen"));
        seen.iter().last().and_then(|m| m.as_string())
    };
    let succeeded = |m: &str| {
        m.starts_with('S')
            && Record::decode(&m[1..])
                .is_ok_and(|r| r.key == b.key() && r.state == State::Succeeded)
    };
    assert!(
        until(|| last().is_some_and(|m| succeeded(&m)), 5000.0).await,
        "the last notice on the scope's channel is not the success: {:?}",
        last()
    );
    tab.close();
    b.finish();
}

// P-abandoned: reset() in one tab stops the other tab's submit before its next try
#[wasm_bindgen_test]
async fn reset_in_one_tab_stops_the_other_tabs_retries_then_takes_effect() {
    // Each 503 asks for a 1 s wait: time to reset in the other tab between two tries.
    let Paying {
        tab,
        customer,
        o,
        a,
        a_ev,
        pa,
        ..
    } = paying(
        r#"{"mode":"respond","count":3,"status":503,"retry_after":"1"}"#,
        "retry",
    )
    .await;
    let b = open(&o);
    let k1 = b.key();
    assert_eq!(tab_get(&a, "key").as_string().unwrap(), k1);
    assert!(b.reset(), "reset() said its end is not durable");
    let k2 = b.key();
    assert_ne!(k2, k1, "the new key shows at once");
    let ra = settled(pa).await;
    assert_eq!(text(&ra, "error"), "outcome-unknown", "{ra:?}");
    assert!(text(&ra, "message").contains("abandoned"), "{ra:?}");
    assert_eq!(
        events_of(&a_ev, "attempt").len(),
        1,
        "the old key was re-sent"
    );
    // The other tab follows: a new key (one of its own: the key reset() made is kept in
    // this page until a submit stores it).
    assert!(
        until(|| tab_get(&a, "key").as_string().unwrap() != k1, 5000.0).await,
        "the other tab still shows the attempt reset() ended"
    );
    assert_eq!(tab_get(&a, "state").as_string().unwrap(), "fresh");
    schedule(&customer, r#"{"mode":"none"}"#).await;
    // Its Pay pressed again (its last submit ended outcome-unknown) belongs to the attempt
    // it was pressed in, which ended with no answer yet: it goes on under that attempt's
    // own key, never a new one, and gets its answer (P-submit-before-end).
    let again = settled(tab_submit(&a, &js(PAY))).await;
    assert_eq!(
        (text(&again, "key"), num(&again, "status")),
        (k1.clone(), 201.0)
    );
    // The next submit of this page is the order reset() began: the key reset() showed.
    let rb = submit(&b, &js(PAY)).await.unwrap();
    assert_eq!((text(&rb, "key"), num(&rb, "status")), (k2.clone(), 201.0));
    let mut charged = ledger(&customer).await;
    charged.sort();
    let mut want = vec![k1, k2];
    want.sort();
    assert_eq!(charged, want, "one charge an attempt");
    tab.close();
    b.finish();
}

// P-wire-try-reported: finish() waits for the try on the wire; its charge is reported
#[wasm_bindgen_test]
async fn finish_in_one_tab_waits_for_the_other_tabs_try_on_the_wire() {
    let Paying {
        tab,
        customer,
        scope,
        o,
        a,
        pa,
        ..
    } = paying(SLOW, "attempt").await;
    let b = open(&o);
    let k1 = b.key();
    assert!(b.finish(), "finish() said its end is not durable");
    assert_ne!(b.key(), k1);
    // The try already sent ends as it would have: the charge is made and reported.
    let ra = settled(pa).await;
    assert_eq!(num(&ra, "status"), 201.0, "{ra:?}");
    assert_eq!(text(&ra, "key"), k1);
    assert!(until(|| tab_get(&a, "key").as_string().unwrap() != k1, 5000.0).await);
    assert_eq!(tab_get(&a, "state").as_string().unwrap(), "fresh");
    assert_eq!(ledger(&customer).await, vec![k1.clone()]);
    // The finished attempt is passed over for the next order: a page loaded now shows a
    // new key, and the same basket paid there is charged under it.
    let later = Tab::open().await;
    let next = later.open_checkout(&opts(&scope, &customer, "{}"));
    next.pays_anew(&k1).await;
    assert_eq!(
        ledger(&customer).await.len(),
        2,
        "the next order was not charged"
    );
    next.finish();
    later.close();
    tab.close();
}

// P-sweep: the first open() of a namespace in a page deletes its expired records from IndexedDB too, and only those
#[wasm_bindgen_test]
async fn open_sweeps_indexeddb_once_per_namespace_and_page() {
    let ns = &uniq("op").replace('-', "")[..16];
    let now = js_sys::Date::now();
    let expired = |scope: &str| {
        let r = Record::new(new_key(), scope, now - 10_000.0, 1_000.0);
        (record_key(ns, scope), r.encode())
    };
    let gone = |key: String| async move {
        for _ in 0..250 {
            if idb_get(&key).await.is_none() {
                return true;
            }
            sleep(20).await;
        }
        false
    };
    let in_ns = |scope: &str| {
        open(&opts(
            scope,
            "nobody",
            &format!(r#"{{"namespace":"{ns}"}}"#),
        ))
    };
    let (k1, v1) = expired("first");
    idb_put(&k1, &v1).await;
    let live = Record::new(new_key(), "live", now, 60_000.0);
    let kl = record_key(ns, "live");
    idb_put(&kl, &live.encode()).await;
    let other = record_key(&format!("{ns}x"), "old");
    idb_put(&other, &expired("old").1).await;
    let a = in_ns("a");
    assert!(
        gone(k1).await,
        "the page's first open() of the namespace did not sweep it"
    );
    assert_eq!(
        idb_get(&kl).await,
        Some(live.encode()),
        "a live record was swept"
    );
    assert!(
        idb_get(&other).await.is_some(),
        "another namespace was swept"
    );
    // A second open() of the namespace in this page leaves IndexedDB alone (a scan per
    // open would delay every submit behind it).
    let (k2, v2) = expired("second");
    idb_put(&k2, &v2).await;
    let b = in_ns("b");
    sleep(500).await;
    assert!(idb_get(&k2).await.is_some(), "open() swept IndexedDB again");
    a.finish();
    b.finish();
}

// P-unknown-resumes: after outcome-unknown in one tab, the same payload in another tab sends the same key: one charge
#[wasm_bindgen_test]
async fn an_unknown_outcome_in_one_tab_is_resumed_in_another_with_the_same_key() {
    let tab = Tab::open().await;
    let customer = uniq("cust");
    let scope = uniq("cart");
    // The server charges, then its answer is lost (a 502), and no retry is left.
    fault(&customer, "error-after-commit", 1, 0).await;
    let a = tab.checkout(&opts(&scope, &customer, r#"{"maxRetries":0}"#));
    let ra = settled(tab_submit(&a, &js(PAY))).await;
    assert_eq!(text(&ra, "error"), "outcome-unknown", "{ra:?}");
    let k = tab_get(&a, "key").as_string().unwrap();
    assert_eq!(ledger(&customer).await, vec![k.clone()], "charged once");
    let (ob, ev) = recorded_opts(&scope, &customer, "{}");
    let b = open(&ob);
    let rb = submit(&b, &js(PAY)).await.unwrap();
    assert_eq!(text(&rb, "key"), k, "{:?}", types(&ev));
    assert!(flag(&rb, "replayed"), "the server replays its first answer");
    assert_eq!(num(&rb, "status"), 201.0);
    assert_eq!(ledger(&customer).await, vec![k], "charged once");
    tab.close();
    b.finish();
}

// P-tabs-follow-state: the storage event keeps checkout.state and the state events current
// P-event-state: a state event with state and previous when another tab changed the record
#[wasm_bindgen_test]
async fn the_storage_event_keeps_state_current() {
    let scope = uniq("tabs");
    let (o, ev) = recorded_opts(&scope, "nobody", "{}");
    let c = open(&o);
    let rk = record_key("idemkey", &scope);
    // Another tab (a page of its own, whose localStorage writes reach this page as
    // `storage` events) takes the attempt to succeeded under a key of its own.
    let other = Tab::open().await;
    let theirs = a_record(&scope, js_sys::Date::now(), 60_000.0, State::Succeeded);
    other.local().set_item(&rk, &theirs.encode()).unwrap();
    assert!(
        until(|| c.state() == "succeeded", 5000.0).await,
        "the other tab's write was not heard: {}",
        c.state()
    );
    assert_eq!(c.key(), theirs.key);
    assert_eq!(c.attempts(), 1);
    let st = events_of(&ev, "state");
    assert_eq!(st.len(), 1);
    assert_eq!(get(&st[0], "state").as_string().unwrap(), "succeeded");
    assert_eq!(get(&st[0], "previous").as_string().unwrap(), "fresh");
    // Events for other keys are ignored.
    fire_storage(&record_key("idemkey", "another-scope"), Some("junk".into()));
    assert_eq!(c.state(), "succeeded");
    // The other tab calls finish(): the next attempt here gets a new key.
    let done = other.open_checkout(&opts(&scope, "nobody", "{}"));
    assert_eq!(done.key(), theirs.key);
    assert!(done.finish(), "finish() said its end is not durable");
    assert!(
        until(|| c.state() == "fresh", 5000.0).await,
        "{}",
        c.state()
    );
    assert_ne!(c.key(), theirs.key);
    other.close();
}
