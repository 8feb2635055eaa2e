//! RFC 9457 problem documents, as bytes: the refusals of
//! [`Error`](crate::Error), and any answer an application stores in the same
//! shape (a declined card, say).

use axum::http::StatusCode;

/// Media type of every problem document.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Serialises a problem document. `extra` members are appended (e.g. `key`).
pub fn problem_body(
    status: StatusCode,
    code: &str,
    title: &str,
    detail: &str,
    extra: &[(&str, serde_json::Value)],
) -> Vec<u8> {
    let mut obj = serde_json::Map::new();
    obj.insert("type".into(), format!("urn:idemkey:problem:{code}").into());
    obj.insert("title".into(), title.into());
    obj.insert("status".into(), status.as_u16().into());
    obj.insert("detail".into(), detail.into());
    obj.insert("code".into(), code.into());
    for (k, v) in extra {
        obj.insert((*k).to_string(), v.clone());
    }
    // Serialising a Map of plain values cannot fail.
    serde_json::to_vec(&serde_json::Value::Object(obj)).unwrap_or_default()
}
