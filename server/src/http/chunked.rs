//! Finds where a chunked body ends, so the guard knows where the next request
//! head starts on a kept-alive connection. It only delimits: hyper decodes the
//! body, and a body this scanner finds malformed ends the connection.

use crate::http::limits::{MAX_CHUNK_EXT_LEN, MAX_TRAILER_LEN};

/// Where a chunked body stands after some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The body goes on.
    More,
    /// The body ended (with the last byte consumed).
    End,
    /// The bytes are not chunked framing (the last byte consumed is the bad one).
    Bad,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Size,
    Ext,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    Trailer,
    TrailerLf,
    EndLf,
}

/// Scans one chunked body (RFC 9112, 7.1).
#[derive(Debug, Clone)]
pub struct ChunkedScanner {
    state: State,
    digits: usize,
    size: u64,
    ext: usize,
    trailer: usize,
}

impl Default for ChunkedScanner {
    fn default() -> Self {
        ChunkedScanner {
            state: State::Size,
            digits: 0,
            size: 0,
            ext: 0,
            trailer: 0,
        }
    }
}

impl ChunkedScanner {
    /// Consumes `bytes` up to the end of the body; returns how many it took.
    pub fn feed(&mut self, bytes: &[u8]) -> (usize, Step) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Data {
                let n = (bytes.len() - i).min(usize::try_from(self.size).unwrap_or(usize::MAX));
                self.size -= n as u64;
                i += n;
                if self.size == 0 {
                    self.state = State::DataCr;
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            match self.byte(b) {
                Step::More => {}
                step => return (i, step),
            }
        }
        (i, Step::More)
    }

    fn byte(&mut self, b: u8) -> Step {
        use State::*;
        self.state = match (self.state, b) {
            (Size, _) if b.is_ascii_hexdigit() => {
                self.digits += 1;
                if self.digits > 15 {
                    return Step::Bad;
                }
                let d = (b as char).to_digit(16).unwrap_or(0);
                self.size = self.size * 16 + u64::from(d);
                Size
            }
            (Size, b';' | b' ' | b'\t') if self.digits > 0 => Ext,
            (Size, b'\r') if self.digits > 0 => SizeLf,
            (Ext, b'\r') => SizeLf,
            (Ext, _) if b == b'\t' || b >= 0x20 && b != 0x7f => {
                self.ext += 1;
                if self.ext > MAX_CHUNK_EXT_LEN {
                    return Step::Bad;
                }
                Ext
            }
            (SizeLf, b'\n') if self.size == 0 => TrailerStart,
            (SizeLf, b'\n') => Data,
            (DataCr, b'\r') => DataLf,
            (DataLf, b'\n') => {
                self.digits = 0;
                self.ext = 0;
                Size
            }
            (TrailerStart, b'\r') => EndLf,
            (Trailer, b'\r') => TrailerLf,
            (TrailerStart | Trailer, _) if b == b'\t' || b >= 0x20 && b != 0x7f => {
                self.trailer += 1;
                if self.trailer > MAX_TRAILER_LEN {
                    return Step::Bad;
                }
                Trailer
            }
            (TrailerLf, b'\n') => TrailerStart,
            (EndLf, b'\n') => return Step::End,
            _ => return Step::Bad,
        };
        Step::More
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(bytes: &[u8]) -> (usize, Step) {
        ChunkedScanner::default().feed(bytes)
    }

    #[test]
    fn finds_the_end_and_leaves_what_follows() {
        let body = b"4\r\nWiki\r\n5;name=v\r\npedia\r\n0\r\n\r\nGET / HTTP/1.1";
        assert_eq!(scan(body), (body.len() - 14, Step::End));
        let trailer = b"1\r\nx\r\n0\r\nX-T: 1\r\n\r\n";
        assert_eq!(scan(trailer), (trailer.len(), Step::End));
        assert_eq!(scan(b"10\r\n0123"), (8, Step::More));
    }

    #[test]
    fn the_same_answer_byte_by_byte() {
        let body = b"a\r\n0123456789\r\n0\r\n\r\n";
        let mut s = ChunkedScanner::default();
        for (i, b) in body.iter().enumerate() {
            let want = if i == body.len() - 1 {
                Step::End
            } else {
                Step::More
            };
            assert_eq!(s.feed(std::slice::from_ref(b)), (1, want), "byte {i}");
        }
    }

    #[test]
    fn garbage_is_bad() {
        for bad in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"2\r\n{}XX",
            b"2\n{}",
            b"fffffffffffffffff\r\n",
            b"1;\x01\r\n",
            b"0\r\nX: \x00\r\n",
        ] {
            assert_eq!(scan(bad).1, Step::Bad, "{:?}", String::from_utf8_lossy(bad));
        }
        let long_ext = format!("1;{}\r\n", "e".repeat(MAX_CHUNK_EXT_LEN + 1));
        assert_eq!(scan(long_ext.as_bytes()).1, Step::Bad);
    }
}
