//! The server's strict JSON reader (repeated member names refused), against serde_json and
//! the client's own parser.
//!
//! Properties: what it accepts, serde_json reads to the same value, and it holds no
//! repeated member; what it refuses while serde_json accepts holds a repeated member (or
//! nests deeper than the client's parser goes, which then cannot tell).

use idemkey::core::json::Json;
use idemkey_server::http::json::parse_strict;
use serde_json::Value;

/// Parses `data` with the server's strict reader.
pub fn check(data: &[u8]) {
    let strict = parse_strict(data);
    let loose = serde_json::from_slice::<Value>(data);
    let client = std::str::from_utf8(data).ok().map(Json::parse);
    let dup = client
        .as_ref()
        .is_some_and(|c| c.as_ref().err().map(String::as_str) == Some("duplicate object key"));
    match (&strict, &loose) {
        (Ok(s), Ok(l)) => {
            assert_eq!(s, l, "strict and serde_json read different values");
            assert!(
                !dup,
                "accepted a repeated member: {:?}",
                String::from_utf8_lossy(data)
            );
        }
        (Ok(_), Err(e)) => panic!("strict accepts what serde_json refuses ({e})"),
        (Err(_), Ok(_)) => {
            let deep = client
                .as_ref()
                .is_some_and(|c| c.as_ref().err().is_some_and(|e| e.starts_with("nesting")));
            assert!(
                dup || deep,
                "refused without a repeated member: {:?}",
                String::from_utf8_lossy(data)
            );
        }
        (Err(_), Err(_)) => {}
    }
}
