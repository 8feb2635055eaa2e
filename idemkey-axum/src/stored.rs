//! The answer a key keeps: status, `Content-Type`, the headers it names and
//! the body, sent again byte for byte by every replay.

use axum::http::{header, HeaderMap, HeaderName, HeaderValue};

/// A final answer as stored for replay: sent again byte for byte, with the
/// headers it names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// Content-Type header value.
    pub content_type: String,
    /// Other headers sent with it and with every replay (lowercase names).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// The headers [`StoredResponse::from_parts`] keeps besides `Content-Type`.
pub const KEPT_HEADERS: [HeaderName; 2] = [header::LOCATION, header::ETAG];

impl StoredResponse {
    /// A response of `status` with `body` of type `content_type`.
    pub fn new(status: u16, content_type: impl Into<String>, body: Vec<u8>) -> StoredResponse {
        StoredResponse {
            status,
            content_type: content_type.into(),
            headers: Vec::new(),
            body,
        }
    }

    /// A response of `status` with a JSON `body` (`application/json`).
    pub fn json(status: u16, body: Vec<u8>) -> StoredResponse {
        StoredResponse::new(status, "application/json", body)
    }

    /// The same, sent (and replayed) with `name: value` too.
    pub fn with_header(mut self, name: HeaderName, value: &HeaderValue) -> StoredResponse {
        // Values an `HeaderValue` holds that are not text are not kept.
        if let Ok(v) = value.to_str() {
            self.headers
                .push((name.as_str().to_string(), v.to_string()));
        }
        self
    }

    /// A response of `status` and `body` with the `Content-Type` of
    /// `headers` (JSON if it has none) and its [`KEPT_HEADERS`] (`Location`,
    /// `ETag`); add others with [`StoredResponse::with_header`].
    pub fn from_parts(status: u16, headers: &HeaderMap, body: Vec<u8>) -> StoredResponse {
        let ctype = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/json");
        let mut r = StoredResponse::new(status, ctype, body);
        for name in KEPT_HEADERS {
            for v in headers.get_all(&name) {
                r = r.with_header(name.clone(), v);
            }
        }
        r
    }

    /// [`StoredResponse::headers`] as stored in the key table (a JSON array
    /// of pairs); `None` when there are none.
    pub fn headers_text(&self) -> Option<String> {
        (!self.headers.is_empty()).then(|| serde_json::json!(self.headers).to_string())
    }

    /// Reads back [`StoredResponse::headers_text`]: an error for text this
    /// crate did not write.
    pub fn parse_headers(text: Option<&str>) -> Result<Vec<(String, String)>, String> {
        match text {
            None => Ok(Vec::new()),
            Some(t) => serde_json::from_str(t).map_err(|e| format!("stored headers: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_headers_round_trip_and_a_wrong_record_is_an_error() {
        let r = StoredResponse::json(201, vec![])
            .with_header(header::LOCATION, &HeaderValue::from_static("/a b"))
            .with_header(header::ETAG, &HeaderValue::from_static("\"x\""));
        let text = r.headers_text();
        assert_eq!(
            StoredResponse::parse_headers(text.as_deref()).unwrap(),
            r.headers
        );
        assert_eq!(StoredResponse::json(201, vec![]).headers_text(), None);
        assert!(StoredResponse::parse_headers(None).unwrap().is_empty());
        for bad in ["", "{", "{}", "[1]", r#"[["a"]]"#, r#"[["a", 1]]"#] {
            assert!(StoredResponse::parse_headers(Some(bad)).is_err(), "{bad}");
        }
    }
}
