//! Browser tests of one page that need little of the server: options, the fresh record,
//! refresh, reset/finish, the storage options (a declined card stores a key, charging
//! nothing), payloads JSON cannot carry.

use crate::support::*;
use idemkey::core::ended::Mark;
use idemkey::core::fingerprint::fingerprint;
use idemkey::core::record::{ended_key, ends_key, Record};
use idemkey::core::state::State;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

fn bad_options(o: JsValue, option: &str) {
    match Checkout::open(o) {
        Ok(_) => panic!("open accepted a bad `{option}`"),
        Err(e) => assert_idem_error(&e, "invalid-options", &format!("`{option}`")),
    }
}

fn base(extra: &str) -> JsValue {
    opts(&uniq("opt"), "nobody", extra)
}

// P-options-named: open() refuses each bad option with invalid-options naming it
// P-error-invalid-options: a missing, unknown or out-of-range option: invalid-options, the message names it
// P-error-shape: open() throws an Error named IdemError with a code
#[wasm_bindgen_test]
fn invalid_options_name_the_option() {
    bad_options(base(r#"{"scope":""}"#), "scope");
    bad_options(
        base(&format!(r#"{{"scope":"{}"}}"#, "x".repeat(201))),
        "scope",
    );
    bad_options(js(r#"{"endpoint":"/x"}"#), "scope");
    bad_options(js(r#"{"scope":"s"}"#), "endpoint");
    bad_options(base(r#"{"endpoint":""}"#), "endpoint");
    bad_options(base(r#"{"scope":42}"#), "scope");
    bad_options(base(r#"{"ttlSeconds":-1}"#), "ttlSeconds");
    bad_options(base(r#"{"timeoutMs":1.5}"#), "timeoutMs");
    bad_options(base(r#"{"maxRetries":"3"}"#), "maxRetries");
    bad_options(base(r#"{"deadlineMs":0}"#), "deadlineMs");
    bad_options(base(r#"{"storage":"disk"}"#), "storage");
    bad_options(base(r#"{"headerFormat":"quoted"}"#), "headerFormat");
    bad_options(base(r#"{"headerName":"Bad Name"}"#), "headerName");
    bad_options(base(r#"{"method":"GET"}"#), "method");
    bad_options(base(r#"{"namespace":"a:b"}"#), "namespace");
    bad_options(base(r#"{"credentials":"always"}"#), "credentials");
    bad_options(
        base(r#"{"backoff":{"baseMs":500,"maxMs":100}}"#),
        "backoff.baseMs",
    );
    bad_options(base(r#"{"backoff":{"maxMs":-5}}"#), "backoff.maxMs");
    bad_options(base(r#"{"backoff":{"base":5}}"#), "backoff.base");
    bad_options(base(r#"{"backoff":7}"#), "backoff");
    bad_options(base(r#"{"scoop":"typo"}"#), "scoop");
    bad_options(base(r#"{"onEvent":"log"}"#), "onEvent");
    let o = base("{}");
    set(&o, "headers", &js(r#"{"X-A":1}"#));
    bad_options(o, "headers");
    // Rules only the browser knows exactly: caught at open, not as "network errors" later.
    bad_options(base(r#"{"headers":{"X-Note":"5 €"}}"#), "headers");
    bad_options(base(r#"{"endpoint":"http://[::1/pay"}"#), "endpoint");
    bad_options(
        base(r#"{"endpoint":"https://user:pw@example.com/pay"}"#),
        "endpoint",
    );
    bad_options(JsValue::UNDEFINED, "options");
    bad_options(JsValue::from_str("scope"), "options");
}

#[wasm_bindgen_test]
async fn open_shows_a_fresh_key_and_stores_nothing_before_a_submit() {
    let scope = uniq("fresh");
    let c = open(&opts(&scope, "nobody", r#"{"ttlSeconds":60}"#));
    let key = c.key();
    assert_eq!(key.len(), 36);
    assert_eq!(&key[14..15], "4", "UUID v4: {key}");
    assert!(
        matches!(&key[19..20], "8" | "9" | "a" | "b"),
        "UUID variant: {key}"
    );
    assert_eq!(c.scope(), scope);
    assert_eq!(c.state(), "fresh");
    assert_eq!(c.attempts(), 0);
    assert_eq!(c.storage(), "local");
    assert_eq!(c.expires_at() - c.created_at(), 60_000.0);
    // Nothing was sent under the key, so nothing is stored: the first submit stores it.
    let rk = record_key("idemkey", &scope);
    sleep(300).await;
    assert_eq!(
        local().get_item(&rk).unwrap(),
        None,
        "open() stored a record"
    );
    // A second open of the same scope in the page sees the same key and state.
    let again = open(&opts(&scope, "nobody", "{}"));
    assert_eq!(again.key(), key);
    assert_eq!(again.state(), "fresh");
    assert_eq!(again.created_at(), c.created_at());
    c.finish();
}

#[wasm_bindgen_test]
fn new_key_is_a_fresh_uuid_v4() {
    let (a, b) = (new_key(), new_key());
    assert_ne!(a, b);
    for k in [a, b] {
        assert!(idemkey::core::record::is_uuid(&k), "{k}");
        assert_eq!(&k[14..15], "4");
    }
}

// P-reset-final: reset() shows a new key at once, kept in the page until a submit stores it
// P-finish-final: finish() shows a new key at once, fresh, and no open() in the page sees the old one
#[wasm_bindgen_test]
async fn reset_and_finish() {
    let scope = uniq("reset");
    let (o, _ev) = recorded_opts(&scope, "nobody", "{}");
    let c = open(&o);
    let k1 = c.key();
    assert!(c.reset(), "reset() said its end is not durable");
    let k2 = c.key();
    assert_ne!(k1, k2, "the new key shows at once");
    assert_eq!(c.state(), "fresh");
    assert_eq!(open(&opts(&scope, "nobody", "{}")).key(), k2);
    // Like the key open() shows, it is kept in the page: nothing is stored, and another
    // tab shows a key of its own, never the one reset() ended.
    let rk = record_key("idemkey", &scope);
    sleep(300).await;
    assert_eq!(
        local().get_item(&rk).unwrap(),
        None,
        "reset() stored a record"
    );
    let other = Tab::open().await;
    let theirs = other.open_checkout(&opts(&scope, "nobody", "{}"));
    assert_ne!(theirs.key(), k1, "another tab shows the key reset() ended");
    assert_ne!(
        theirs.key(),
        k2,
        "another tab shows the key kept in this page"
    );
    other.close();
    assert!(c.finish(), "finish() said its end is not durable");
    assert_ne!(c.key(), k2);
    assert_ne!(c.key(), k1);
    assert_eq!(c.state(), "fresh");
    let again = open(&opts(&scope, "nobody", "{}"));
    assert_eq!(
        again.key(),
        c.key(),
        "open() after finish() shows another key"
    );
    assert_eq!(
        local().get_item(&rk).unwrap(),
        None,
        "finish() stored a record"
    );
    c.finish();
}

// P-option-storage: "memory" keeps the record in this page, out of Web Storage
#[wasm_bindgen_test]
fn memory_storage_stays_out_of_web_storage_and_is_shared_in_the_page() {
    let scope = uniq("mem");
    let c = open(&opts(&scope, "nobody", r#"{"storage":"memory"}"#));
    assert_eq!(c.storage(), "memory");
    assert_eq!(
        local().get_item(&record_key("idemkey", &scope)).unwrap(),
        None
    );
    assert_eq!(
        open(&opts(&scope, "nobody", r#"{"storage":"memory"}"#)).key(),
        c.key()
    );
    c.finish();
}

// P-error-invalid-payload: a payload JSON cannot carry rejects with invalid-payload, nothing sent
// P-error-shape: submit() rejects with an Error named IdemError with a code
#[wasm_bindgen_test]
async fn a_payload_json_cannot_carry_is_rejected() {
    let c = open(&opts(&uniq("payload"), "nobody", "{}"));
    let e = submit(&c, &JsValue::UNDEFINED).await.unwrap_err();
    assert_idem_error(&e, "invalid-payload", "payload");
    let e = submit(&c, &js_sys::BigInt::from(5u32).into())
        .await
        .unwrap_err();
    assert_idem_error(&e, "invalid-payload", "payload");
    let cyclic = js_sys::Object::new();
    set(&cyclic, "self", &cyclic);
    let e = submit(&c, &cyclic).await.unwrap_err();
    assert_idem_error(&e, "invalid-payload", "payload");
    let e = submit(&c, &js_sys::Function::new_no_args("").into())
        .await
        .unwrap_err();
    assert_idem_error(&e, "invalid-payload", "payload");
    assert_eq!(c.state(), "fresh");
    assert_eq!(c.attempts(), 0);
    c.finish();
}

// P-option-namespace: the record is stored under `<namespace>:v1:<scope>`
#[wasm_bindgen_test]
async fn the_namespace_prefixes_the_storage_key() {
    let ns = uniq("shop").replace('-', "")[..20].to_string();
    let scope = uniq("ns");
    let c = open(&opts(
        &scope,
        "nobody",
        &format!(r#"{{"namespace":"{ns}"}}"#),
    ));
    // A submit stores the key it sends (a declined card: nothing charged).
    let r = submit(&c, &js(DECLINED)).await.unwrap();
    let key = text(&r, "key");
    let mine = format!("{ns}:v1:{scope}");
    assert!(
        until(
            || local()
                .get_item(&mine)
                .unwrap()
                .is_some_and(|t| t.contains(&key)),
            5000.0
        )
        .await,
        "no record at {mine}"
    );
    assert_eq!(
        local().get_item(&format!("idemkey:v1:{scope}")).unwrap(),
        None
    );
    c.finish();
}

// P-option-storage: "session" keeps the record in this tab's sessionStorage, not in localStorage
#[wasm_bindgen_test]
async fn session_storage_keeps_the_record_in_session_storage() {
    let scope = uniq("session");
    let c = open(&opts(&scope, "nobody", r#"{"storage":"session"}"#));
    assert_eq!(c.storage(), "session");
    // A submit stores the key it sends (a declined card: nothing charged).
    submit(&c, &js(DECLINED)).await.unwrap();
    let rk = format!("idemkey:v1:{scope}");
    let stored = || {
        session()
            .get_item(&rk)
            .unwrap()
            .map(|t| Record::decode(&t).unwrap().key)
    };
    assert!(
        until(|| stored() == Some(c.key()), 5000.0).await,
        "not in sessionStorage: {:?}",
        stored()
    );
    assert_eq!(local().get_item(&rk).unwrap(), None);
    // A refresh of the tab finds it there.
    let again = open(&opts(&scope, "nobody", r#"{"storage":"session"}"#));
    assert_eq!(again.key(), c.key());
    assert_eq!(again.state(), "failed");
    // After finish(), a reload of the tab shows a new key, not the attempt it ended.
    let k = c.key();
    assert!(c.finish(), "finish() said its end is not durable");
    drop((c, again));
    let reload = Tab::open().await;
    let next = reload.open_checkout(&opts(&scope, "nobody", r#"{"storage":"session"}"#));
    assert_ne!(next.key(), k, "a reload shows the finished attempt");
    assert_eq!(next.state(), "fresh");
    reload.close();
}

/// Payloads whose canonical JSON is easy to get wrong: names that look like array indexes
/// (an object lists them first), names outside the BMP (sorted by UTF-16 code units, not
/// code points), numbers JSON writes in exponent form, escapes, nesting, and non-objects.
const AWKWARD: [&str; 6] = [
    r#"{"b":1,"a":2,"10":3,"9":4,"B":5,"\u00e9":6,"\ud83d\ude00":7,"\uff61":8}"#,
    r#"{"n":[0.1,1e21,-0,1.5e-7,123456789012345680000,5e-324,-12.5]}"#,
    r#"{"s":"q\"\\\b\f\n\r\t\u0001\u001f\u007f\u2028 \u00e9 \ud83d\ude00 <\/"}"#,
    r#"[{"z":{"y":{"x":null,"w":[{}]}}},true,false,"",[]]"#,
    r#""a string""#,
    r#"42"#,
];

/// A succeeded record of `scope` for `payload` in localStorage, as the module stored it
/// before: the hash of its own canonical form of the page's JSON.stringify text.
fn stored_paid(scope: &str, payload: &JsValue) -> Record {
    let page_text = String::from(js_sys::JSON::stringify(payload).unwrap());
    let mut r = a_record(scope, js_sys::Date::now(), 3_600_000.0, State::Succeeded);
    r.fingerprint = Some(fingerprint(&page_text).unwrap());
    local()
        .set_item(&record_key("idemkey", scope), &r.encode())
        .unwrap();
    r
}

// P-same-payload: a record an earlier version stored is matched to the same payload, whatever its member order
#[wasm_bindgen_test]
async fn a_record_an_earlier_version_stored_answers_the_same_payload() {
    for (i, json) in AWKWARD.iter().enumerate() {
        let payload = js(json);
        let scope = uniq("earlier");
        let r = stored_paid(&scope, &payload);
        let c = open(&opts(&scope, "nobody", "{}"));
        let got = submit(&c, &payload).await;
        let got = got.unwrap_or_else(|e| panic!("payload {i} ({json}): {e:?}"));
        assert!(flag(&got, "fromCache"), "payload {i}: {got:?}");
        assert_eq!(text(&got, "key"), r.key);
        // Another payload under the same record is still another payload.
        let e = submit(&c, &js(r#"{"amount":1}"#)).await.unwrap_err();
        assert_idem_error(&e, "payload-conflict", "");
        c.finish();
    }
}

// The mark and flag are written here by hand, as an end elsewhere leaves them once
// localStorage hands them over. Without the flag (removed by hand) the scope's marks are
// not listed, but the submit reads the mark of the record's copy by its own entry first,
// and writes the flag again: that end is heard all the same.
// P-finish-durable: an end's mark and its scope's flag in localStorage are heard by the page's next submit: the attempt it ended does not answer it, the next order is paid
#[wasm_bindgen_test]
async fn another_tabs_mark_is_heard_where_its_scopes_flag_is() {
    let payload = js(PAY);
    for flagged in [true, false] {
        let scope = uniq("flag");
        let r = stored_paid(&scope, &payload);
        let c = open(&opts(&scope, "nobody", "{}"));
        assert_eq!(c.key(), r.key);
        let mark = Mark {
            key: r.key.clone(),
            bound: true,
            until: r.expires_at,
        };
        if flagged {
            local()
                .set_item(&ends_key("idemkey", &scope), &mark.line())
                .unwrap();
        }
        let at = format!("{}:{}", ended_key("idemkey", &scope), r.key);
        local().set_item(&at, &mark.line()).unwrap();
        let got = submit(&c, &payload).await.unwrap();
        let answered = (flag(&got, "fromCache"), text(&got, "key") == r.key);
        assert_eq!(answered, (false, false), "flag {flagged}: {got:?}");
        let flag_now = local().get_item(&ends_key("idemkey", &scope)).unwrap();
        assert!(flag_now.is_some(), "flag {flagged}: not written again");
    }
}
