//! The tests' HTTP/1.1 client, written by hand (see the harness's doc): raw bytes on a
//! fresh connection, the responses parsed, and the requests the tests make of the
//! reference server's API (charges, the ledger, faults).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// A parsed HTTP response.
#[derive(Debug, Clone)]
pub struct Resp {
    /// Status code.
    pub status: u16,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Raw body bytes (chunked encoding removed).
    pub body: Vec<u8>,
}

impl Resp {
    /// First header value by (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    /// Body as text (lossy), for assertion messages.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }
    /// Body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.text()))
    }
    /// True with `Idempotent-Replayed: true`.
    pub fn replayed(&self) -> bool {
        self.header("idempotent-replayed") == Some("true")
    }
    /// Asserts an RFC 9457 problem with this status.
    pub fn assert_problem(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "body: {}", self.text());
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json")
        );
        let p = self.json();
        assert_eq!(p["status"], status);
        for m in ["type", "title", "detail", "code"] {
            assert!(p[m].is_string(), "problem member {m} missing: {p}");
        }
        p
    }
}

/// Sends raw bytes on a fresh connection and reads the whole answer.
/// `Ok(None)`: the server closed the connection without answering.
pub fn raw(addr: SocketAddr, bytes: &[u8]) -> std::io::Result<Option<Resp>> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    // The server may answer (413) before reading everything; keep going.
    let _ = s.write_all(bytes);
    let buf = read_until_closed(&mut s)?;
    if buf.is_empty() {
        return Ok(None);
    }
    Ok(Some(parse_response(&buf)))
}

/// Sends raw bytes on a fresh connection and reads every answer until the
/// server closes it (none when it closed without a word).
pub fn raw_all(addr: SocketAddr, bytes: &[u8]) -> Vec<Resp> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = s.write_all(bytes);
    let buf = read_until_closed(&mut s).unwrap_or_else(|e| {
        panic!("reading the answers: {e} (the server kept the connection open?)")
    });
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let (r, used) = parse_one(&buf[at..]);
        out.push(r);
        at += used;
    }
    out
}

/// What the server sent on `s` until it closed the connection (a reset counts as closing).
fn read_until_closed(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match s.read(&mut chunk) {
            Ok(0) => return Ok(buf),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(buf),
            Err(e) => return Err(e),
        }
    }
}

/// Parses one response from the bytes of a connection (head, then the body by its framing).
pub fn parse_response(buf: &[u8]) -> Resp {
    parse_one(buf).0
}

/// One response from the start of `buf`, and how many bytes it took.
fn parse_one(buf: &[u8]) -> (Resp, usize) {
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("response head");
    let head = std::str::from_utf8(&buf[..end]).expect("ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .expect("status")
        .parse()
        .expect("status code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &buf[end + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        let mut out = Vec::new();
        let mut r = rest;
        loop {
            let nl = r
                .windows(2)
                .position(|w| w == b"\r\n")
                .expect("chunk size line");
            let size = usize::from_str_radix(
                std::str::from_utf8(&r[..nl])
                    .unwrap()
                    .split(';')
                    .next()
                    .unwrap()
                    .trim(),
                16,
            )
            .unwrap();
            r = &r[nl + 2..];
            if size == 0 {
                // No trailers are sent: the final CRLF.
                r = &r[2.min(r.len())..];
                break;
            }
            out.extend_from_slice(&r[..size]);
            r = &r[size + 2..];
        }
        (out, buf.len() - r.len())
    } else if let Some(len) = headers.iter().find(|(n, _)| n == "content-length") {
        let len: usize = len.1.parse().unwrap();
        assert!(rest.len() >= len, "short body");
        (rest[..len].to_vec(), end + 4 + len)
    } else {
        (rest.to_vec(), buf.len())
    };
    let (body, used) = body;
    (
        Resp {
            status,
            headers,
            body,
        },
        used,
    )
}

/// One request with `Connection: close` and a Content-Length.
pub fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Option<Resp>> {
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    raw(addr, &bytes)
}

/// Like [`try_request`] but panics when there is no response.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    try_request(addr, method, path, headers, body)
        .expect("io")
        .expect("the server closed the connection without a response")
}

/// `POST /api/charges` as `customer` with `key` and a JSON body.
pub fn charge(addr: SocketAddr, customer: &str, key: &str, body: &str) -> Resp {
    try_charge(addr, customer, key, body)
        .expect("io")
        .expect("no response")
}

/// Like [`charge`] but returns `None` when the connection closed unanswered.
pub fn try_charge(
    addr: SocketAddr,
    customer: &str,
    key: &str,
    body: &str,
) -> std::io::Result<Option<Resp>> {
    try_request(
        addr,
        "POST",
        "/api/charges",
        &[
            ("Content-Type", "application/json"),
            ("X-Customer-Id", customer),
            ("Idempotency-Key", key),
        ],
        body.as_bytes(),
    )
}

/// `GET path` as `customer`, JSON body.
pub fn get_json(addr: SocketAddr, path: &str, customer: &str) -> Value {
    let r = request(addr, "GET", path, &[("X-Customer-Id", customer)], b"");
    assert_eq!(r.status, 200, "GET {path}: {}", r.text());
    r.json()
}

/// The customer's ledger.
pub fn ledger(addr: SocketAddr, customer: &str) -> Value {
    get_json(addr, "/api/charges", customer)
}

/// The provider stand-in's `(calls, payments)` for `customer`.
pub fn provider_counts(addr: SocketAddr, customer: &str) -> (i64, i64) {
    let p = get_json(addr, "/api/provider", customer);
    (
        p["calls"].as_i64().expect("calls"),
        p["payments"].as_i64().expect("payments"),
    )
}

/// The `key` of every charge in a ledger, in ledger order (oldest first).
pub fn charge_keys(ledger: &Value) -> Vec<&str> {
    ledger["charges"]
        .as_array()
        .expect("charges")
        .iter()
        .map(|ch| ch["key"].as_str().expect("key"))
        .collect()
}

/// Schedules a fault for `customer`.
pub fn fault(addr: SocketAddr, customer: &str, body: &str) -> Value {
    let r = request(
        addr,
        "POST",
        "/api/faults",
        &[
            ("Content-Type", "application/json"),
            ("X-Customer-Id", customer),
        ],
        body.as_bytes(),
    );
    assert_eq!(r.status, 200, "POST /api/faults: {}", r.text());
    r.json()
}
