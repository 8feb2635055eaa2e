//! The server's strict request-head reader (the guard in front of hyper), fed in pieces.
//!
//! Properties: the verdict does not depend on how the bytes are split (a head dripped a
//! byte at a time is the same head); a refusal is a 4xx; an accepted head ends with its
//! blank line, declares at most 64 KiB of body, and is one that hyper's own parser
//! (httparse) reads completely too, with the same Content-Length, so nothing the guard
//! lets through is refused by hyper with an empty body.

use crate::feed_in_pieces;
use idemkey_server::http::head::{Framing, HeadParser, Scan};
use idemkey_server::http::limits::BODY_LIMIT;

/// A verdict that can be compared: how many bytes, and what it said.
#[derive(Debug, PartialEq)]
enum Verdict {
    Done(Framing),
    Refuse(u16, String),
    More,
}

/// Feeds `bytes` in pieces of `step` bytes (0: all at once).
fn scan(bytes: &[u8], step: usize) -> (usize, Verdict) {
    let mut p = HeadParser::default();
    let (taken, verdict) = feed_in_pieces(bytes, step, |piece| match p.feed(piece) {
        (n, Scan::More) => (n, None),
        (n, Scan::Done(f)) => (n, Some(Verdict::Done(f))),
        (n, Scan::Refuse(e)) => (
            n,
            Some(Verdict::Refuse(e.status_code().0.as_u16(), e.to_string())),
        ),
    });
    (taken, verdict.unwrap_or(Verdict::More))
}

/// Reads the bytes after the first one as a request head; the first picks the split.
pub fn check(data: &[u8]) {
    let Some((&seed, head)) = data.split_first() else {
        return;
    };
    let (taken, verdict) = scan(head, 0);
    let step = 1 + seed as usize % 17;
    assert_eq!(
        scan(head, step),
        (taken, verdict_clone(&verdict)),
        "split by {step}"
    );
    match verdict {
        Verdict::More => assert_eq!(taken, head.len()),
        Verdict::Refuse(status, detail) => {
            assert!((400..500).contains(&status), "{status} for {head:?}");
            assert!(!detail.is_empty());
        }
        Verdict::Done(framing) => {
            let h = &head[..taken];
            assert!(h.ends_with(b"\r\n\r\n"), "accepted without its blank line");
            if let Framing::Length(n) = framing {
                assert!(
                    n > 0 && n <= BODY_LIMIT as u64,
                    "Content-Length {n} accepted"
                );
            }
            let mut headers = [httparse::EMPTY_HEADER; 128];
            let mut req = httparse::Request::new(&mut headers);
            match req.parse(h) {
                Ok(httparse::Status::Complete(n)) => assert_eq!(n, h.len()),
                other => panic!(
                    "the guard accepted a head hyper refuses ({other:?}): {:?}",
                    String::from_utf8_lossy(h)
                ),
            }
            let lengths: Vec<&[u8]> = req
                .headers
                .iter()
                .filter(|x| x.name.eq_ignore_ascii_case("content-length"))
                .map(|x| x.value)
                .collect();
            match framing {
                Framing::Length(n) => {
                    assert_eq!(lengths.len(), 1);
                    assert_eq!(
                        std::str::from_utf8(lengths[0])
                            .unwrap()
                            .trim()
                            .parse::<u64>()
                            .ok(),
                        Some(n)
                    );
                }
                Framing::Chunked => assert!(lengths.is_empty(), "Content-Length beside chunked"),
                Framing::None => {}
            }
        }
    }
}

fn verdict_clone(v: &Verdict) -> Verdict {
    match v {
        Verdict::Done(f) => Verdict::Done(*f),
        Verdict::Refuse(s, d) => Verdict::Refuse(*s, d.clone()),
        Verdict::More => Verdict::More,
    }
}
