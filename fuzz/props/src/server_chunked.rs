//! The scanner that finds where a chunked body ends (so the next request on a kept-alive
//! connection starts at the right byte).
//!
//! Properties: the verdict does not depend on how the bytes are split; a body the test
//! encodes itself (any chunk sizes, extensions, trailers), followed by anything, ends
//! exactly where its encoding ends.

use crate::feed_in_pieces;
use arbitrary::{Result, Unstructured};
use idemkey_server::http::chunked::{ChunkedScanner, Step};

fn scan(bytes: &[u8], step: usize) -> (usize, Step) {
    let mut s = ChunkedScanner::default();
    let (taken, verdict) = feed_in_pieces(bytes, step, |piece| match s.feed(piece) {
        (n, Step::More) => (n, None),
        (n, done) => (n, Some(done)),
    });
    (taken, verdict.unwrap_or(Step::More))
}

/// A valid chunked encoding of arbitrary chunks, and what follows it.
fn encoded(u: &mut Unstructured) -> Result<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    for _ in 0..u.int_in_range(0..=4u8)? {
        let chunk: Vec<u8> = u.arbitrary()?;
        if chunk.is_empty() {
            continue;
        }
        let size = if u.arbitrary()? {
            format!("{:x}", chunk.len())
        } else {
            format!("{:X}", chunk.len())
        };
        out.extend_from_slice(size.as_bytes());
        if u.ratio(1, 4)? {
            out.extend_from_slice(b";name=value");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n");
    if u.ratio(1, 4)? {
        out.extend_from_slice(b"X-Trailer: yes\r\n");
    }
    out.extend_from_slice(b"\r\n");
    let end = out.len();
    out.extend_from_slice(u.bytes(u.len())?);
    Ok((out, end))
}

/// Scans `data` (after its first byte, which picks the mode and the split).
pub fn check(data: &[u8]) {
    let Some((&seed, rest)) = data.split_first() else {
        return;
    };
    let step = 1 + (seed >> 1) as usize % 13;
    if seed & 1 == 0 {
        let whole = scan(rest, 0);
        assert_eq!(scan(rest, step), whole, "split by {step}");
        assert!(whole.0 <= rest.len());
        return;
    }
    let Ok((bytes, end)) = encoded(&mut Unstructured::new(rest)) else {
        return;
    };
    assert_eq!(
        scan(&bytes, 0),
        (end, Step::End),
        "{:?}",
        String::from_utf8_lossy(&bytes)
    );
    assert_eq!(scan(&bytes, step), (end, Step::End), "split by {step}");
}
