//! The server's charge body reader (Content-Type, Content-Length, the JSON, delivered in
//! arbitrary chunks), behind the rules and body layers every request passes, and the
//! charge validation behind it.
//!
//! Properties: only JSON media types are read; a body over 64 KiB, or a declared length
//! over it, is a 413 problem; an accepted body is exactly what serde_json reads from
//! those bytes, and never a document with a repeated member name (ambiguous: which amount
//! is charged?); an accepted charge keeps its documented ranges; the payload fingerprint
//! is taken over a canonical form that is idempotent.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use arbitrary::{Result, Unstructured};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::routing::post;
use axum::Router;
use http_body::Frame;
use idemkey::core::json::Json;
use idemkey_server::http::body::{read_json, validate_charge, CURRENCIES, MAX_AMOUNT};
use idemkey_server::http::problem::ApiError;
use idemkey_server::http::rules;
use idemkey_server::idem::fingerprint::{canonical, Fingerprinter};
use serde_json::Value;
use tower::ServiceExt;

/// The server's fingerprint under a fixed secret (any secret keeps the properties).
fn fingerprint(v: &Value) -> String {
    Fingerprinter::new(&[42; 32])
        .expect("a 32-byte secret")
        .of(v)
}

/// Largest body read, as the server's limit.
const BODY_LIMIT: usize = 64 * 1024;

thread_local! {
    static RT: RefCell<tokio::runtime::Runtime> = RefCell::new(
        tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime"),
    );
}

/// A request body that hands out its bytes in the given chunks, as a network would.
struct Chunks(VecDeque<Bytes>);

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = std::convert::Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
    }
}

/// One request: headers, body bytes and how they are chunked.
struct Request {
    headers: HeaderMap,
    declared: Option<u64>,
    json_type: bool,
    body: Vec<u8>,
    cuts: Vec<usize>,
}

fn request(u: &mut Unstructured) -> Result<Request> {
    let mut headers = HeaderMap::new();
    let ct: Option<Vec<u8>> = match u.int_in_range(0..=6u8)? {
        0 => None,
        1 => Some(b"application/json".to_vec()),
        2 => Some(b"Application/JSON; charset=utf-8".to_vec()),
        3 => Some(b"application/merge-patch+json".to_vec()),
        4 => Some(b"text/plain".to_vec()),
        5 => Some(b" application/json ;x=\"y\"".to_vec()),
        _ => Some(u.arbitrary()?),
    };
    let mut json_type = false;
    if let Some(v) = ct.and_then(|c| HeaderValue::from_bytes(&c).ok()) {
        let essence = v.to_str().ok().map(|s| {
            s.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
        json_type = essence.is_some_and(|e| {
            e == "application/json" || (e.starts_with("application/") && e.ends_with("+json"))
        });
        headers.insert(header::CONTENT_TYPE, v);
    }
    let mut body: Vec<u8> = u.arbitrary()?;
    if u.ratio(1, 16)? {
        // Pad with whitespace (still the same JSON) to just under, at or over the limit.
        let target = BODY_LIMIT - 8 + u.int_in_range(0..=16usize)?;
        body.resize(target.max(body.len()), b' ');
    }
    let declared = match u.int_in_range(0..=4u8)? {
        0 => None,
        1 => Some(body.len() as u64),
        2 => Some(u.arbitrary()?),
        3 => Some(BODY_LIMIT as u64 + u.int_in_range(0..=2u64)? - 1),
        _ => {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("12abc"));
            None
        }
    };
    if let Some(n) = declared {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(n));
    }
    let mut cuts: Vec<usize> = Vec::new();
    for _ in 0..u.int_in_range(0..=4u8)? {
        cuts.push(u.int_in_range(0..=body.len())?);
    }
    cuts.sort_unstable();
    Ok(Request {
        headers,
        declared,
        json_type,
        body,
        cuts,
    })
}

/// What became of one request: `read_json`'s verdict, or the status of an answer given
/// before the handler ran.
type Outcome = std::result::Result<std::result::Result<Value, ApiError>, u16>;

/// Sends `headers` and `body` through the rules and body layers to a handler that reads
/// the body with `read_json`.
async fn serve(headers: HeaderMap, body: Body) -> Outcome {
    let seen = Arc::new(Mutex::new(None));
    let slot = seen.clone();
    let app = rules::apply(Router::new().route(
        "/",
        post(move |h: HeaderMap, b: Body| async move {
            let got = read_json(&h, b).await;
            *slot.lock().expect("slot") = Some(got);
        }),
    ));
    let mut req = axum::http::Request::post("/")
        .header(header::HOST, "fuzz")
        .body(body)
        .expect("request");
    req.headers_mut().extend(headers);
    let resp = app.oneshot(req).await.expect("infallible");
    let got = seen.lock().expect("slot").take();
    got.ok_or(resp.status().as_u16())
}

/// Reads a request built from `data` through the server's body reader.
pub fn check(data: &[u8]) {
    let Ok(r) = request(&mut Unstructured::new(data)) else {
        return;
    };
    let mut chunks = VecDeque::new();
    let mut at = 0;
    for &c in r.cuts.iter().chain([&r.body.len()]) {
        chunks.push_back(Bytes::copy_from_slice(&r.body[at..c]));
        at = c;
    }
    let body = Body::new(Chunks(chunks));
    let got = match RT.with(|rt| rt.borrow().block_on(serve(r.headers.clone(), body))) {
        Ok(got) => got,
        // Answered before the handler: only a declared length over the limit.
        Err(status) => {
            assert_eq!(status, 413, "{:?}", r.declared);
            assert!(r.declared.is_some_and(|n| n > BODY_LIMIT as u64));
            return;
        }
    };
    if !r.json_type {
        assert!(
            matches!(got, Err(ApiError::UnsupportedMediaType)),
            "{got:?}"
        );
        return;
    }
    if r.body.len() > BODY_LIMIT {
        assert!(
            matches!(got, Err(ApiError::PayloadTooLarge { .. })),
            "{got:?}"
        );
        return;
    }
    let v = match got {
        Ok(v) => v,
        Err(ApiError::InvalidBody(m)) => {
            assert!(!m.is_empty());
            return;
        }
        Err(ApiError::PayloadTooLarge { .. }) => {
            // Only when the body runs past its declared length (hyper never lets that
            // happen; this harness does).
            assert!(
                r.declared.is_some_and(|n| n < r.body.len() as u64),
                "413 for {r:?}",
                r = r.body.len()
            );
            return;
        }
        Err(e) => panic!("unexpected {e:?}"),
    };
    let theirs: Value = serde_json::from_slice(&r.body).expect("accepted bytes are JSON");
    assert_eq!(v, theirs);
    if let Ok(text) = std::str::from_utf8(&r.body) {
        assert_ne!(
            Json::parse(text).err().as_deref(),
            Some("duplicate object key"),
            "accepted a body with a repeated member: {text:?}"
        );
    }
    check_fingerprint(&v);
    if let Ok(c) = validate_charge(v) {
        assert!((1..=MAX_AMOUNT).contains(&c.amount));
        assert!(CURRENCIES.contains(&c.currency.as_str()));
        assert!(c
            .card
            .as_ref()
            .is_none_or(|d| (12..=19).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit())));
    }
}

/// The canonical form reads back to itself and to the same fingerprint.
fn check_fingerprint(v: &Value) {
    let mut canon = String::new();
    canonical(v, &mut canon);
    let back: Value = serde_json::from_str(&canon).expect("canonical form is JSON");
    let mut again = String::new();
    canonical(&back, &mut again);
    assert_eq!(again, canon, "canonical form is not idempotent");
    assert_eq!(fingerprint(&back), fingerprint(v));
}
