//! The body of `POST /api/faults` (`--faults` only), validated.
//!
//! Properties: a scheduled fault keeps its documented ranges; only `respond` carries an
//! answer, and the answer it renders is exactly the one scheduled; `none` clears; every
//! refusal names what is wrong (the API answers it with a 400).

use axum::http::header;
use idemkey_server::faults::request::{parse, MAX_BODY, MAX_HEADER};
use idemkey_server::faults::FaultMode;
use idemkey_server::http::problem::canned_response;
use serde_json::Value;

/// Parses `data` as JSON and validates it as a fault request.
pub fn check(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    match parse(v.clone()) {
        Ok(None) => assert_eq!(v.get("mode"), Some(&Value::from("none"))),
        Ok(Some(r)) => {
            assert_ne!(r.mode, FaultMode::None);
            assert!(
                (1..=10_000).contains(&r.count) && r.delay_ms <= 120_000,
                "{r:?}"
            );
            assert_eq!(r.respond.is_some(), r.mode == FaultMode::Respond);
            if let Some(c) = &r.respond {
                assert!((200..=599).contains(&c.status) && c.body.len() <= MAX_BODY);
                assert!(!matches!(c.status, 204 | 205 | 304) || c.body.is_empty());
                for h in [&c.retry_after, &c.content_type].into_iter().flatten() {
                    assert!(!h.is_empty() && h.len() <= MAX_HEADER);
                }
                let resp = canned_response(c);
                assert_eq!(resp.status().as_u16(), c.status);
                // Compared as bytes: a value may hold obs-text (bytes over 0x7f), which
                // HTTP allows and `to_str` refuses.
                let hv = |n| resp.headers().get(n).map(|v| v.as_bytes().to_vec());
                let given = |v: &Option<String>| v.as_ref().map(|s| s.as_bytes().to_vec());
                assert_eq!(hv(header::RETRY_AFTER), given(&c.retry_after));
                assert_eq!(hv(header::CONTENT_TYPE), given(&c.content_type));
            }
        }
        Err(m) => {
            assert!(
                m.contains('`') || m.contains("JSON object"),
                "{m:?} names nothing"
            );
        }
    }
}
