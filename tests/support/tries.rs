//! What the reference server saw of a submit's tries, and why the client retried: the
//! fault log's units, keys and payload fingerprints, and the `retry` events' reasons.

use js_sys::Array;
use wasm_bindgen::JsValue;

use super::*;

/// A fault unit that changes nothing (`delay-after-commit` of 0 ms): scheduled after the
/// faults under test, it makes the final, successful request show up in the fault log too.
pub const MARKER: &str = r#"{"mode":"delay-after-commit","delay_ms":0}"#;

/// Asserts that the requests that reached the server took exactly the fault units `modes`,
/// in order, all with `key` and with one payload fingerprint (the same body), and that
/// nothing is left scheduled.
pub async fn assert_requests(customer: &str, key: &str, modes: &[&str]) {
    let f = faults(customer).await;
    assert_eq!(
        Array::from(&get(&f, "scheduled")).length(),
        0,
        "all units taken"
    );
    let taken: Vec<JsValue> = Array::from(&get(&f, "taken")).iter().collect();
    let seen: Vec<String> = taken.iter().map(|t| text(t, "mode")).collect();
    assert_eq!(seen, modes, "the requests that reached the server");
    let fp = text(&taken[0], "fingerprint");
    for t in &taken {
        assert_eq!(text(t, "key"), key, "one key for every try");
        assert_eq!(text(t, "fingerprint"), fp, "one body for every try");
    }
}

/// The `reason` of each `retry` event `ev` recorded.
pub fn reasons(ev: &js_sys::Function) -> Vec<String> {
    events_of(ev, "retry")
        .iter()
        .map(|e| text(e, "reason"))
        .collect()
}
