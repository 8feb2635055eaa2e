//! The body of `POST /api/faults`, validated: which mode, how many units, and
//! for `respond` the exact answer to give (status, `Retry-After`, body,
//! `Content-Type`). Every refusal says which field is wrong.

use std::sync::Arc;

use axum::http::HeaderValue;
use serde_json::{Map, Value};

use crate::faults::FaultMode;
use crate::idem::injected::Canned;

/// Default delay of `delay-after-commit`.
pub const DEFAULT_DELAY_MS: u64 = 1_000;
const MAX_DELAY_MS: u64 = 120_000;
const MAX_COUNT: u64 = 10_000;
/// Largest `body` of a `respond` fault, in bytes.
pub const MAX_BODY: usize = 16 * 1024;
/// Largest `retry_after` / `content_type` of a `respond` fault, in bytes.
pub const MAX_HEADER: usize = 256;
/// The members only `respond` takes.
const RESPOND_FIELDS: [&str; 4] = ["status", "retry_after", "body", "content_type"];

fn header_value(s: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(s).ok()
}

/// A validated scheduling request; `None` for mode `none` (clear).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRequest {
    /// The mode (never `None`).
    pub mode: FaultMode,
    /// How many requests take it.
    pub count: u32,
    /// For `delay-after-commit`.
    pub delay_ms: u64,
    /// For `respond`.
    pub respond: Option<Arc<Canned>>,
}

fn bad(m: impl Into<String>) -> String {
    m.into()
}

/// Parses and validates the body of `POST /api/faults`.
pub fn parse(v: Value) -> Result<Option<FaultRequest>, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| bad("the body must be a JSON object"))?;
    let mode: FaultMode = obj
        .get("mode")
        .cloned()
        .and_then(|m| serde_json::from_value(m).ok())
        .ok_or_else(|| {
            bad("`mode` must be one of none, drop-after-commit, error-after-commit, fail-before-commit, \
                 delay-after-commit, crash-after-provider, drop-before-commit, respond, worker-fail-before-receipt, worker-crash-before-ack")
        })?;
    let count = match obj.get("count") {
        None => 1,
        Some(c) => c
            .as_u64()
            .filter(|n| (1..=MAX_COUNT).contains(n))
            .ok_or_else(|| bad("`count` must be an integer from 1 to 10000"))?,
    };
    let delay_ms = match obj.get("delay_ms") {
        None => DEFAULT_DELAY_MS,
        Some(d) => d
            .as_u64()
            .filter(|n| *n <= MAX_DELAY_MS)
            .ok_or_else(|| bad("`delay_ms` must be an integer from 0 to 120000"))?,
    };
    let respond = if mode == FaultMode::Respond {
        Some(Arc::new(canned(obj)?))
    } else {
        if let Some(f) = RESPOND_FIELDS.iter().find(|f| obj.contains_key(**f)) {
            return Err(bad(format!("`{f}` is only for mode respond")));
        }
        None
    };
    Ok((mode != FaultMode::None).then_some(FaultRequest {
        mode,
        count: count as u32,
        delay_ms,
        respond,
    }))
}

fn canned(obj: &Map<String, Value>) -> Result<Canned, String> {
    // 1xx are interim answers in HTTP/1.1, never a final one (hyper would
    // turn them into a 500), so a canned answer is 200..=599.
    let status = obj
        .get("status")
        .and_then(Value::as_u64)
        .filter(|s| (200..=599).contains(s))
        .ok_or_else(|| bad("mode respond needs `status`, an integer from 200 to 599"))?
        as u16;
    let retry_after = header_field(obj, "retry_after")?;
    let content_type = header_field(obj, "content_type")?;
    let body = match obj.get("body") {
        None => String::new(),
        Some(Value::String(s)) if s.len() <= MAX_BODY => s.clone(),
        Some(_) => return Err(bad("`body` must be a string of at most 16384 bytes")),
    };
    if matches!(status, 204 | 205 | 304) && !body.is_empty() {
        return Err(bad(format!("a {status} answer cannot carry a `body`")));
    }
    Ok(Canned {
        status,
        retry_after,
        body,
        content_type,
    })
}

/// An optional string that must be a valid header value of bounded size.
fn header_field(obj: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match obj.get(name) {
        None => Ok(None),
        Some(Value::String(s))
            if !s.is_empty() && s.len() <= MAX_HEADER && header_value(s).is_some() =>
        {
            Ok(Some(s.clone()))
        }
        Some(_) => Err(bad(format!(
            "`{name}` must be a string of 1 to 256 bytes valid as a header value (no control characters)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn respond_keeps_every_field_verbatim() {
        let r = parse(json!({"mode": "respond", "count": 2, "status": 429,
            "retry_after": "Wed, 21 Oct 2015 07:28:00 GMT", "body": "slow down", "content_type": "text/plain"}))
        .unwrap()
        .unwrap();
        assert_eq!((r.mode, r.count), (FaultMode::Respond, 2));
        let c = r.respond.unwrap();
        assert_eq!(
            *c,
            Canned {
                status: 429,
                retry_after: Some("Wed, 21 Oct 2015 07:28:00 GMT".into()),
                body: "slow down".into(),
                content_type: Some("text/plain".into()),
            }
        );
    }

    #[test]
    fn other_modes_carry_no_answer() {
        let r = parse(json!({"mode": "drop-before-commit", "count": 3}))
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.mode, r.count, r.respond),
            (FaultMode::DropBeforeCommit, 3, None)
        );
        assert_eq!(parse(json!({"mode": "none"})).unwrap(), None);
    }

    #[test]
    fn bad_requests_name_the_field() {
        let long = "x".repeat(MAX_HEADER + 1);
        let huge = "x".repeat(MAX_BODY + 1);
        for (v, needle) in [
            (json!({}), "`mode`"),
            (json!({"mode": "explode"}), "`mode`"),
            (json!({"mode": "drop-after-commit", "count": 0}), "`count`"),
            (
                json!({"mode": "delay-after-commit", "delay_ms": -1}),
                "`delay_ms`",
            ),
            (json!([]), "JSON object"),
            (json!({"mode": "respond"}), "`status`"),
            (json!({"mode": "respond", "status": 99}), "`status`"),
            (json!({"mode": "respond", "status": 100}), "`status`"),
            (json!({"mode": "respond", "status": 600}), "`status`"),
            (json!({"mode": "respond", "status": "503"}), "`status`"),
            (
                json!({"mode": "respond", "status": 503, "retry_after": 1}),
                "`retry_after`",
            ),
            (
                json!({"mode": "respond", "status": 503, "retry_after": ""}),
                "`retry_after`",
            ),
            (
                json!({"mode": "respond", "status": 503, "retry_after": long}),
                "`retry_after`",
            ),
            (
                json!({"mode": "respond", "status": 503, "retry_after": "1\r\nX: y"}),
                "`retry_after`",
            ),
            (
                json!({"mode": "respond", "status": 503, "content_type": "a\nb"}),
                "`content_type`",
            ),
            (
                json!({"mode": "respond", "status": 503, "body": 5}),
                "`body`",
            ),
            (
                json!({"mode": "respond", "status": 503, "body": huge}),
                "`body`",
            ),
            (
                json!({"mode": "respond", "status": 204, "body": "x"}),
                "`body`",
            ),
            (
                json!({"mode": "fail-before-commit", "status": 503}),
                "`status` is only for mode respond",
            ),
        ] {
            match parse(v.clone()) {
                Err(m) => assert!(m.contains(needle), "{v}: {m}"),
                other => panic!("{v}: {other:?}"),
            }
        }
    }
}
