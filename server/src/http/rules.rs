//! Rules over parsed requests: what hyper accepts but this server refuses,
//! and the body limits, as middleware around every router it serves.
//!
//! hyper frames every request; nothing here reads a byte of the wire. These
//! rules look at the head hyper parsed and refuse, as problem+json with
//! `Connection: close`, what is legal HTTP but ambiguous to a payment API or
//! to a proxy in front of it: a missing or repeated `Host`, a repeated
//! `Content-Type`, a transfer coding other than one `chunked` (hyper decodes
//! any list whose last coding is `chunked`), one sent with `Content-Length`
//! (hyper lets `Transfer-Encoding` win), `CONNECT`, a request target that is neither a path nor an
//! absolute http URI, one longer than [`MAX_URI_LEN`], and a head larger
//! than [`MAX_HEAD_LEN`] (hyper's buffer limit is not exact: a head that
//! arrives in one read may pass it).
//!
//! A request sent chunked is answered with `Connection: close`. hyper lets
//! `Transfer-Encoding` override a `Content-Length` that follows it and drops
//! that `Content-Length` from the head, so such a request cannot be told
//! from a plain chunked one here; closing after it leaves nothing behind it
//! that could be read as a request of its own (a proxy that framed it by
//! its length would have sent one). The body limit
//! and deadline are tower-http's layers; a limit they answer themselves
//! becomes a problem too.

use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Version};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::RequestBodyDeadlineLayer;

use crate::http::limits::{BODY_LIMIT, BODY_TIMEOUT, MAX_HEAD_LEN, MAX_URI_LEN};
use crate::http::problem::{ApiError, PROBLEM_JSON};

/// `app` with the request rules, the body limit and the body deadline.
pub fn apply(app: Router) -> Router {
    app.layer(RequestBodyDeadlineLayer::new(BODY_TIMEOUT))
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(middleware::from_fn(check))
}

async fn check(req: Request, next: Next) -> Response {
    if let Err(e) = refusal(&req) {
        tracing::debug!(status = e.status_code().0.as_u16(), "request refused: {e}");
        let mut resp = e.into_response();
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return resp;
    }
    let chunked = req.headers().contains_key(header::TRANSFER_ENCODING);
    let mut resp = next.run(req).await;
    // RequestBodyLimitLayer answers a declared length over the limit itself.
    let own = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v == PROBLEM_JSON);
    if resp.status() == StatusCode::PAYLOAD_TOO_LARGE && !own {
        resp = ApiError::PayloadTooLarge { limit: BODY_LIMIT }.into_response();
    }
    if chunked {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

/// How many times `name` was sent.
fn count(headers: &HeaderMap, name: header::HeaderName) -> usize {
    headers.get_all(name).iter().count()
}

/// The first rule `req` breaks.
fn refusal(req: &Request) -> Result<(), ApiError> {
    let bad = |detail| Err(ApiError::BadRequest(detail));
    let h = req.headers();
    if req.method() == Method::CONNECT {
        return bad("CONNECT is not served");
    }
    let uri = req.uri();
    let form_ok = match uri.scheme_str() {
        Some(s) => s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"),
        None if uri.path() == "*" => req.method() == Method::OPTIONS,
        None => uri.path().starts_with('/') && uri.authority().is_none(),
    };
    if !form_ok {
        return bad("the request target is not a path or an absolute http URI");
    }
    let target_len = uri.path_and_query().map_or(0, |p| p.as_str().len())
        + uri.authority().map_or(0, |a| a.as_str().len());
    if target_len > MAX_URI_LEN {
        return Err(ApiError::UriTooLong);
    }
    // hyper's read buffer bounds a head loosely (one read may run past it).
    let head_len = req.method().as_str().len()
        + target_len
        + h.iter()
            .map(|(n, v)| n.as_str().len() + v.len() + 4)
            .sum::<usize>();
    if head_len > MAX_HEAD_LEN {
        return Err(ApiError::HeadersTooLarge(
            "the request head is larger than 32 KiB",
        ));
    }
    match count(h, header::HOST) {
        0 if req.version() != Version::HTTP_10 => {
            return bad("the Host header is required in HTTP/1.1")
        }
        0 | 1 => {}
        _ => return bad("the Host header was sent more than once"),
    }
    if count(h, header::CONTENT_TYPE) > 1 {
        return bad("the Content-Type header was sent more than once: which one holds?");
    }
    let codings: Vec<&HeaderValue> = h.get_all(header::TRANSFER_ENCODING).iter().collect();
    if !codings.is_empty() {
        if h.contains_key(header::CONTENT_LENGTH) {
            return bad("Content-Length and Transfer-Encoding together are ambiguous");
        }
        let chunked = |v: &HeaderValue| v.as_bytes().trim_ascii().eq_ignore_ascii_case(b"chunked");
        if codings.len() > 1 || !chunked(codings[0]) {
            return bad("Transfer-Encoding must be exactly `chunked`; no other coding is accepted");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(builder: axum::http::request::Builder) -> u16 {
        let req = builder.body(axum::body::Body::empty()).unwrap();
        match refusal(&req) {
            Ok(()) => 0,
            Err(e) => e.status_code().0.as_u16(),
        }
    }

    fn get(uri: &str) -> axum::http::request::Builder {
        Request::builder().uri(uri).header("host", "x")
    }

    #[test]
    fn plain_requests_pass() {
        assert_eq!(status(get("/healthz")), 0);
        assert_eq!(status(get("http://x/healthz")), 0);
        assert_eq!(status(get("/").header("content-length", "2")), 0);
        assert_eq!(status(get("/").header("transfer-encoding", "Chunked")), 0);
        let ten = Request::builder().uri("/").version(Version::HTTP_10);
        assert_eq!(status(ten), 0);
        let star = Request::builder()
            .method("OPTIONS")
            .uri("*")
            .header("host", "x");
        assert_eq!(status(star), 0);
    }

    #[test]
    fn ambiguous_requests_are_refused() {
        let long = format!("/{}", "a".repeat(MAX_URI_LEN));
        for (b, want) in [
            (Request::builder().uri("/"), 400),
            (get("/").header("host", "y"), 400),
            (
                get("/")
                    .header("content-type", "a/b")
                    .header("content-type", "a/b"),
                400,
            ),
            (get("/").header("transfer-encoding", "gzip, chunked"), 400),
            (
                get("/")
                    .header("transfer-encoding", "chunked")
                    .header("transfer-encoding", "chunked"),
                400,
            ),
            (
                get("/")
                    .header("transfer-encoding", "chunked")
                    .header("content-length", "1"),
                400,
            ),
            (get("*"), 400),
            (get("ftp://x/"), 400),
            (
                Request::builder()
                    .method("CONNECT")
                    .uri("x:443")
                    .header("host", "x"),
                400,
            ),
            (get(&long), 414),
            (get("/").header("x-big", "b".repeat(MAX_HEAD_LEN)), 431),
        ] {
            assert_eq!(status(b), want);
        }
    }
}
