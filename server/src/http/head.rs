//! A strict, incremental reader of HTTP/1.1 request heads.
//!
//! It sees every byte before hyper does and refuses, with a reason, whatever
//! hyper would refuse with an empty body or would accept although it is
//! ambiguous: a bad request line, control characters, folded or bare-LF
//! lines, too many or too large headers, a missing or repeated `Host`, a
//! repeated `Content-Type`, a `Content-Length` that is not one plain number,
//! and any transfer coding but a single `chunked`. Each byte is looked at
//! once, so a head dripped one byte at a time costs no more than a whole one.

use axum::http::Uri;

use crate::http::limits::{
    BODY_LIMIT, MAX_HEADERS, MAX_HEAD_LEN, MAX_LEADING_BLANK_LINES, MAX_METHOD_LEN, MAX_URI_LEN,
};
use crate::http::problem::ApiError;

/// How the body after a head is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    None,
    /// `Content-Length` bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// Where a head stands after some bytes.
#[derive(Debug)]
pub enum Scan {
    /// Complete and acceptable; the body that follows is framed so.
    Done(Framing),
    /// Refused: answer with this error and close.
    Refuse(ApiError),
    /// Not complete yet.
    More,
}

/// The facts of one head that decide its framing and its ambiguity.
#[derive(Debug, Default)]
struct Facts {
    http10: bool,
    hosts: usize,
    content_types: usize,
    lengths: usize,
    length: Option<Result<u64, ApiError>>,
    codings: usize,
    coding_is_chunked: bool,
}

/// Reads one request head, byte by byte; [`HeadParser::feed`] says when it ends.
#[derive(Debug, Default)]
pub struct HeadParser {
    line: Vec<u8>,
    cr: bool,
    total: usize,
    leading: usize,
    request_line: bool,
    headers: usize,
    facts: Facts,
}

fn bad(detail: &'static str) -> Scan {
    Scan::Refuse(ApiError::BadRequest(detail))
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

impl HeadParser {
    /// True once any byte of this head (a blank line included) has arrived.
    pub fn started(&self) -> bool {
        self.total > 0
    }

    /// Bytes of blank lines before the request line: dropped, not passed on.
    pub fn leading(&self) -> usize {
        self.leading
    }

    /// Consumes `bytes` up to the end of the head; returns how many it took
    /// and where the head stands.
    pub fn feed(&mut self, bytes: &[u8]) -> (usize, Scan) {
        for (i, &b) in bytes.iter().enumerate() {
            self.total += 1;
            if let Some(scan) = self.byte(b) {
                return (i + 1, scan);
            }
        }
        (bytes.len(), Scan::More)
    }

    fn byte(&mut self, b: u8) -> Option<Scan> {
        if self.cr {
            self.cr = false;
            if b != b'\n' {
                return Some(bad("a CR in the request head is not followed by LF"));
            }
            return self.end_of_line();
        }
        match b {
            b'\r' => self.cr = true,
            b'\n' => return Some(bad("lines of the request head must end with CRLF")),
            _ if !self.request_line => {
                if !(b == b' ' || b.is_ascii_graphic()) {
                    return Some(bad(
                        "the request line may hold only visible ASCII and spaces",
                    ));
                }
                self.line.push(b);
                if self.line.len() > MAX_METHOD_LEN + MAX_URI_LEN + 16 {
                    return Some(if self.line.contains(&b' ') {
                        Scan::Refuse(ApiError::UriTooLong)
                    } else {
                        bad("this is not an HTTP/1.1 request line")
                    });
                }
            }
            _ => {
                if !(b == b'\t' || b == b' ' || b.is_ascii_graphic() || b >= 0x80) {
                    return Some(bad("a header line holds a control character"));
                }
                self.line.push(b);
            }
        }
        if self.total > MAX_HEAD_LEN {
            return Some(Scan::Refuse(ApiError::HeadersTooLarge(
                "the request head is larger than 32 KiB",
            )));
        }
        None
    }

    fn end_of_line(&mut self) -> Option<Scan> {
        let line = std::mem::take(&mut self.line);
        if !self.request_line {
            if line.is_empty() {
                self.leading += 2;
                return (self.leading > 2 * MAX_LEADING_BLANK_LINES)
                    .then(|| bad("too many blank lines before the request line"));
            }
            self.request_line = true;
            return self.request(&line).err();
        }
        if line.is_empty() {
            return Some(self.finish());
        }
        self.header(&line)
    }

    fn request(&mut self, line: &[u8]) -> Result<(), Scan> {
        let mut parts = line.split(|&b| b == b' ');
        let (Some(method), Some(target), Some(version), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("the request line must be METHOD SP TARGET SP HTTP/1.1"));
        };
        if method.is_empty() || !method.iter().all(|&b| is_tchar(b)) {
            return Err(bad("the method is not a token"));
        }
        if method.len() > MAX_METHOD_LEN {
            return Err(bad("the method is longer than 32 characters"));
        }
        match version {
            b"HTTP/1.1" => {}
            b"HTTP/1.0" => self.facts.http10 = true,
            b"HTTP/2.0" if method == b"PRI" => {
                return Err(bad("HTTP/2 is not served on this port; use HTTP/1.1"))
            }
            _ => return Err(bad("the HTTP version must be HTTP/1.1 or HTTP/1.0")),
        }
        if target.len() > MAX_URI_LEN {
            return Err(Scan::Refuse(ApiError::UriTooLong));
        }
        if method == b"CONNECT" {
            return Err(bad("CONNECT is not served"));
        }
        let lower = target.to_ascii_lowercase();
        let form_ok = match target.first() {
            Some(b'/') => true,
            Some(b'*') => target == b"*" && method == b"OPTIONS",
            _ => lower.starts_with(b"http://") || lower.starts_with(b"https://"),
        };
        if !form_ok || Uri::try_from(target).is_err() {
            return Err(bad(
                "the request target is not a path or an absolute http URI",
            ));
        }
        Ok(())
    }

    fn header(&mut self, line: &[u8]) -> Option<Scan> {
        if matches!(line[0], b' ' | b'\t') {
            return Some(bad("folded header lines (obs-fold) are not accepted"));
        }
        let colon = line.iter().position(|&b| b == b':');
        let Some(colon) = colon.filter(|&c| c > 0 && line[..c].iter().all(|&b| is_tchar(b))) else {
            return Some(bad("a header line must be a token name, ':' and a value"));
        };
        self.headers += 1;
        if self.headers > MAX_HEADERS {
            return Some(Scan::Refuse(ApiError::HeadersTooLarge(
                "the request has more than 100 header fields",
            )));
        }
        let name = &line[..colon];
        let value = trim_ows(&line[colon + 1..]);
        let f = &mut self.facts;
        if name.eq_ignore_ascii_case(b"host") {
            f.hosts += 1;
        } else if name.eq_ignore_ascii_case(b"content-type") {
            f.content_types += 1;
        } else if name.eq_ignore_ascii_case(b"content-length") {
            f.lengths += 1;
            f.length = Some(content_length(value));
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            f.codings += 1;
            f.coding_is_chunked = value.eq_ignore_ascii_case(b"chunked");
        }
        None
    }

    fn finish(&mut self) -> Scan {
        let f = std::mem::take(&mut self.facts);
        if f.hosts > 1 {
            return bad("the Host header was sent more than once");
        }
        if f.hosts == 0 && !f.http10 {
            return bad("the Host header is required in HTTP/1.1");
        }
        if f.content_types > 1 {
            return bad("the Content-Type header was sent more than once: which one holds?");
        }
        if f.codings > 0 {
            return if f.http10 {
                bad("Transfer-Encoding is not allowed in an HTTP/1.0 request")
            } else if f.lengths > 0 {
                bad("Content-Length and Transfer-Encoding together are ambiguous")
            } else if f.codings > 1 || !f.coding_is_chunked {
                bad("Transfer-Encoding must be exactly `chunked`; no other coding is accepted")
            } else {
                Scan::Done(Framing::Chunked)
            };
        }
        if f.lengths > 1 {
            return bad("the Content-Length header was sent more than once");
        }
        match f.length {
            None | Some(Ok(0)) => Scan::Done(Framing::None),
            Some(Ok(n)) => Scan::Done(Framing::Length(n)),
            Some(Err(e)) => Scan::Refuse(e),
        }
    }
}

/// One plain decimal number, within the body limit.
fn content_length(v: &[u8]) -> Result<u64, ApiError> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return Err(ApiError::BadRequest(
            "Content-Length must be one decimal number",
        ));
    }
    let too_large = ApiError::PayloadTooLarge { limit: BODY_LIMIT };
    // Digits only, so the one failure left is overflow: larger than any limit.
    let n: u64 = std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(too_large)?;
    if n > BODY_LIMIT as u64 {
        return Err(ApiError::PayloadTooLarge { limit: BODY_LIMIT });
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(bytes: &[u8]) -> (usize, Scan) {
        HeadParser::default().feed(bytes)
    }

    fn status(bytes: &[u8]) -> u16 {
        match scan(bytes).1 {
            Scan::Done(_) => 0,
            Scan::More => 1,
            Scan::Refuse(e) => e.status_code().0.as_u16(),
        }
    }

    #[test]
    fn a_plain_head_is_done_where_it_ends() {
        let req = b"POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
        let (n, s) = scan(req);
        assert_eq!(n, req.len() - 2);
        assert!(matches!(s, Scan::Done(Framing::Length(2))));
        let (_, s) = scan(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n");
        assert!(matches!(s, Scan::Done(Framing::Chunked)));
        assert!(matches!(
            scan(b"GET / HTTP/1.0\r\n\r\n").1,
            Scan::Done(Framing::None)
        ));
        assert!(matches!(
            scan(b"GET / HTTP/1.1\r\nHost: x\r\n").1,
            Scan::More
        ));
    }

    #[test]
    fn bytes_dripped_one_at_a_time_give_the_same_answer() {
        let req = b"\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
        let mut p = HeadParser::default();
        for (i, b) in req.iter().enumerate() {
            let (n, s) = p.feed(std::slice::from_ref(b));
            assert_eq!(n, 1);
            assert_eq!(
                matches!(s, Scan::Done(Framing::None)),
                i == req.len() - 1,
                "byte {i}"
            );
        }
        assert_eq!(p.leading(), 2);
    }

    #[test]
    fn refusals_and_their_statuses() {
        let many: String = (0..100).map(|i| format!("X-{i}: 1\r\n")).collect();
        let many = format!("GET / HTTP/1.1\r\nHost: x\r\n{many}\r\n");
        let long_uri = format!("GET /{} HTTP/1.1\r\n", "a".repeat(MAX_URI_LEN));
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n", "b".repeat(MAX_HEAD_LEN));
        for (req, want) in [
            (&b"GE T / HTTP/1.1\r\n\r\n"[..], 400),
            (b"G\x00T / HTTP/1.1\r\n", 400),
            (b"GET / HTTP/1.1\nHost: x\n\n", 400),
            (b"GET / HTTP/1.1\rHost: x\r\n\r\n", 400),
            (b"GET / HTTP/1.2\r\nHost: x\r\n\r\n", 400),
            (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400),
            (b"\x16\x03\x01\x00\xa5", 400),
            (b"GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            (b"GET healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            (b"CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            (b"GET /\xc3\xa9 HTTP/1.1\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n folded\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: x\r\nX : a\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\nContent-Type: a/b\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551615\r\n\r\n", 413),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65537\r\n\r\n", 413),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", 400),
            (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            (many.as_bytes(), 431),
            (long_uri.as_bytes(), 414),
            (big.as_bytes(), 431),
        ] {
            assert_eq!(status(req), want, "{:?}", String::from_utf8_lossy(&req[..req.len().min(60)]));
        }
    }

    #[test]
    fn refusals_come_at_the_first_bad_byte() {
        let (n, s) = scan(b"\x16\x03\x01 and much more");
        assert_eq!(n, 1);
        assert!(matches!(s, Scan::Refuse(_)));
    }
}
