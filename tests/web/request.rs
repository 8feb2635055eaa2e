//! Browser tests of what each try of `submit()` puts on the wire, against the real reference
//! server (started by scripts/wasm-test.sh): the key in its header (`headerName`,
//! `headerFormat`), the method, credentials and extra headers as given, and the record
//! holding each key stored before its request, without the payload.

use crate::support::*;
use idemkey::core::fingerprint::fingerprint;
use idemkey::core::record::Record;
use idemkey::core::state::State;
use js_sys::Array;
use wasm_bindgen_test::*;

// P-option-header-name: headerName carries the bare key
// P-option-header-format: sf-string sends the key quoted
#[wasm_bindgen_test]
async fn header_name_and_sf_string_format() {
    let (c, customer, _) = checkout(r#"{"headerFormat":"sf-string"}"#);
    let spy = spy_fetch();
    let r = submit(&c, &js(PAY)).await;
    let seen = Array::from(&get(&spy, "seen"));
    restore(&spy);
    assert_eq!(
        num(&r.unwrap(), "status"),
        201.0,
        "the server accepts a quoted key"
    );
    assert_eq!(seen.length(), 1);
    assert_eq!(text(&seen.get(0), "key"), format!("\"{}\"", c.key()));
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();

    // A custom header name carries the bare key (the server ignores it, so no charge check).
    let (c, _, _) = checkout(r#"{"headerName":"PayPal-Request-Id","maxRetries":0}"#);
    let spy = spy_fetch();
    let r = submit(&c, &js(PAY)).await;
    let seen = Array::from(&get(&spy, "seen"));
    restore(&spy);
    assert_eq!(
        num(&r.unwrap(), "status"),
        400.0,
        "no Idempotency-Key: the server refuses"
    );
    assert_eq!(text(&seen.get(0), "custom"), c.key());
    assert!(get(&seen.get(0), "key").is_null());
    assert_eq!(c.state(), "failed");
    c.finish();
}

// P-stored-before-send: each key is in storage before its request; the payload never is
// P-new-key-after-failed: after a decline the next payload goes under a new key
#[wasm_bindgen_test]
async fn every_key_is_stored_before_its_first_request_and_the_payload_never_is() {
    let (c, customer, _) = checkout(r#"{"maxRetries":0}"#);
    let scope = c.scope();
    let rk = record_key("idemkey", &scope);
    let spy = spy_fetch_watching(&rk);
    // First submit: a decline, so the attempt fails.
    let declined = submit(&c, &js(DECLINED)).await.unwrap();
    let k1 = text(&declined, "key");
    // After "failed": a new attempt with a new key; its only try gets a 503.
    fault(&customer, "fail-before-commit", 1, 0).await;
    let unknown = submit(&c, &js(PAY)).await.unwrap_err();
    assert_idem_error(&unknown, "outcome-unknown", "status-503");
    let k2 = c.key();
    // A refresh resumes the pending key.
    let refreshed = open(&opts(&scope, &customer, "{}"));
    let resumed = submit(&refreshed, &js(PAY)).await.unwrap();
    assert_eq!(num(&resumed, "status"), 201.0);
    // An expired pending record (another day's visit): a new key once more.
    let mut old = Record::new(new_key(), scope.as_str(), 0.0, 1.0);
    old.state = State::Pending;
    old.fingerprint = Some(fingerprint(OTHER).unwrap());
    old.attempts = 1;
    idb_put(&rk, &old.encode()).await;
    local().set_item(&rk, &old.encode()).unwrap();
    let fresh = submit(&refreshed, &js(OTHER)).await.unwrap();
    let k3 = text(&fresh, "key");
    let seen: Vec<_> = Array::from(&get(&spy, "seen")).iter().collect();
    restore(&spy);
    assert!(k1 != k2 && k2 != k3 && k3 != old.key, "{k1} {k2} {k3}");
    let expected = [
        (&k1, DECLINED, 1),
        (&k2, PAY, 1),
        (&k2, PAY, 2),
        (&k3, OTHER, 1),
    ];
    assert_eq!(seen.len(), expected.len());
    for (req, (key, payload, attempts)) in seen.iter().zip(expected) {
        assert_eq!(text(req, "key"), *key);
        let stored = text(req, "stored");
        let rec = Record::decode(&stored).unwrap();
        assert_eq!(rec.key, *key, "the key was in storage before its request");
        assert_eq!(rec.state, State::Pending);
        assert_eq!(rec.attempts, attempts, "this try was counted first");
        assert_eq!(rec.fingerprint, Some(fingerprint(payload).unwrap()));
        for fragment in ["amount", "currency", "sku", "card"] {
            assert!(
                !stored.contains(fragment),
                "payload text {fragment:?} in the record: {stored}"
            );
        }
    }
    refreshed.finish();
}

/// The requests a [`spy_fetch`] saw.
fn requests(spy: &js_sys::Function) -> Vec<wasm_bindgen::JsValue> {
    Array::from(&get(spy, "seen")).iter().collect()
}

// P-option-method: `method` is the HTTP method of every try
// P-option-credentials: `credentials` goes to fetch as given, same-origin by default
// P-option-headers: the extra headers are sent; Content-Type is application/json unless set there
#[wasm_bindgen_test]
async fn method_credentials_and_headers_are_sent_as_given() {
    let customer = uniq("cust");
    // The defaults, with an extra header besides the customer's.
    let extra =
        format!(r#"{{"headers":{{"X-Customer-Id":"{customer}","Authorization":"Bearer tok_1"}}}}"#);
    let c = open(&opts(&uniq("cart"), &customer, &extra));
    let spy = spy_fetch();
    let r = pay(&c).await;
    let seen = requests(&spy);
    restore(&spy);
    assert_eq!(num(&r.unwrap(), "status"), 201.0);
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert_eq!(text(req, "method"), "POST");
    assert_eq!(text(req, "credentials"), "same-origin");
    assert_eq!(text(req, "contentType"), "application/json");
    assert_eq!(text(req, "authorization"), "Bearer tok_1");
    // The server charged the customer an extra header names.
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();

    // Another method, credentials and Content-Type, each as given.
    let extra = format!(
        r#"{{"method":"PUT","credentials":"omit","maxRetries":0,
            "headers":{{"X-Customer-Id":"{customer}","Content-Type":"text/plain"}}}}"#
    );
    let c = open(&opts(&uniq("cart"), &customer, &extra));
    let spy = spy_fetch();
    let r = pay(&c).await;
    let seen = requests(&spy);
    restore(&spy);
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert_eq!(text(req, "method"), "PUT");
    assert_eq!(text(req, "credentials"), "omit");
    assert_eq!(text(req, "contentType"), "text/plain");
    assert!(get(req, "authorization").is_null());
    // The reference server takes charges by POST only: the PUT's answer is final.
    assert_eq!(num(&r.unwrap(), "status"), 405.0);
    assert_eq!(c.state(), "failed");
    assert_eq!(ledger(&customer).await.len(), 1);
    c.finish();
}
