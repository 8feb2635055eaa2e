//! The recursive-descent parser behind [`Json::parse`](super::Json::parse): strict RFC 8259,
//! errors as static messages (nothing is formatted when one is returned).

use super::{Json, MAX_DEPTH};
use crate::prelude::*;

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

type PResult<T> = Result<T, &'static str>;

/// Parses a whole JSON text: one value, then nothing but whitespace.
pub(super) fn document(text: &str) -> PResult<Json> {
    let mut p = Parser { s: text, i: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err("trailing characters after the JSON value");
    }
    Ok(v)
}

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.as_bytes().get(self.i) {
            self.i += 1;
        }
    }

    // Non-panicking slices: the indices are always in range at ASCII boundaries, and
    // `get` has no panic path.
    fn rest(&self) -> &[u8] {
        self.s.as_bytes().get(self.i..).unwrap_or_default()
    }

    fn since(&self, start: usize) -> &str {
        self.s.get(start..self.i).unwrap_or_default()
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn value(&mut self, depth: usize) -> PResult<Json> {
        self.ws();
        match self.peek() {
            None => Err("unexpected end of input"),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Json::Str),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err("unexpected character"),
        }
    }

    fn literal(&mut self, word: &'static str, v: Json) -> PResult<Json> {
        if self.rest().starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err("invalid literal")
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> PResult<Json> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.i += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err("leading zero in number");
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err("invalid number"),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err("invalid number");
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err("invalid number");
            }
        }
        Ok(Json::Num(self.since(start).into()))
    }

    fn hex4(&mut self) -> PResult<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err("invalid \\u escape"),
            };
            v = v * 16 + d as u32;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> PResult<String> {
        self.i += 1; // opening quote
        let mut out = String::new();
        let mut run = self.i;
        loop {
            let c = match self.peek() {
                None => return Err("unterminated string"),
                Some(c) => c,
            };
            match c {
                b'"' => {
                    out.push_str(self.since(run));
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(self.since(run));
                    self.i += 1;
                    self.escape(&mut out)?;
                    run = self.i;
                }
                0..=0x1f => return Err("control character in string"),
                _ => self.i += 1,
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> PResult<()> {
        let c = self.peek().ok_or("unterminated string")?;
        self.i += 1;
        let ch = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                let cp = match hi {
                    0xD800..=0xDBFF => {
                        if !self.rest().starts_with(b"\\u") {
                            return Err("lone surrogate in \\u escape");
                        }
                        self.i += 2;
                        let lo = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return Err("lone surrogate in \\u escape");
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err("lone surrogate in \\u escape"),
                    cp => cp,
                };
                char::from_u32(cp).ok_or("invalid \\u escape")?
            }
            _ => return Err("invalid escape"),
        };
        out.push(ch);
        Ok(())
    }

    fn array(&mut self, depth: usize) -> PResult<Json> {
        if depth > MAX_DEPTH {
            return Err("nesting deeper than 64 levels");
        }
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Json::Arr(items));
        }
        loop {
            items.push(self.value(depth)?);
            if self.item_end(b']', "expected `,` or `]`")? {
                return Ok(Json::Arr(items));
            }
        }
    }

    /// After an array item or object member: `,` (more follow: `false`) or `close` (the
    /// container ends: `true`); anything else is `expected`.
    fn item_end(&mut self, close: u8, expected: &'static str) -> PResult<bool> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                Ok(false)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(true)
            }
            None => Err("unexpected end of input"),
            _ => Err(expected),
        }
    }

    fn object(&mut self, depth: usize) -> PResult<Json> {
        if depth > MAX_DEPTH {
            return Err("nesting deeper than 64 levels");
        }
        self.i += 1;
        let mut members: Vec<(String, Json)> = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Json::Obj(members));
        }
        loop {
            self.ws();
            match self.peek() {
                Some(b'"') => {}
                None => return Err("unexpected end of input"),
                _ => return Err("expected a string key"),
            }
            let k = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(if self.peek().is_none() {
                    "unexpected end of input"
                } else {
                    "expected `:`"
                });
            }
            self.i += 1;
            let v = self.value(depth)?;
            // Duplicates would make the fingerprint ambiguous (JS keeps the last one).
            if members.iter().any(|(m, _)| *m == k) {
                return Err("duplicate object key");
            }
            members.push((k, v));
            if self.item_end(b'}', "expected `,` or `}`")? {
                return Ok(Json::Obj(members));
            }
        }
    }
}
