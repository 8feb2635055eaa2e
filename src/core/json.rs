//! A small strict JSON (RFC 8259) parser and writer, so the wasm needs no serde_json:
//! records are read and written with it, payloads are canonicalised with it.

use core::cmp::Ordering;

/// Deepest nesting of arrays and objects [`Json::parse`] accepts.
pub const MAX_DEPTH: usize = 64;

/// A parsed JSON value; numbers keep the token as written so nothing is lost.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as its source token (e.g. `-1.5e3`).
    Num(String),
    /// A string, unescaped.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, members in source order (keys are unique).
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// Parses one JSON text; anything but whitespace after the value is an error.
    pub fn parse(text: &str) -> Result<Json, String> {
        let mut p = Parser { s: text, b: text.as_bytes(), i: 0 };
        let v = p.value(0).map_err(String::from)?;
        p.ws();
        if p.i != p.b.len() {
            return Err("trailing characters after the JSON value".into());
        }
        Ok(v)
    }

    /// Writes compact JSON (no whitespace), members in stored order.
    pub fn write(&self, out: &mut String) {
        self.write_with(out, false)
    }

    /// Writes compact JSON with object keys sorted by UTF-16 code units at every level (as JCS does).
    pub fn write_canonical(&self, out: &mut String) {
        self.write_with(out, true)
    }

    fn write_with(&self, out: &mut String, sorted: bool) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(true) => out.push_str("true"),
            Json::Bool(false) => out.push_str("false"),
            Json::Num(n) => out.push_str(n),
            Json::Str(s) => write_str(s, out),
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_with(out, sorted);
                }
                out.push(']');
            }
            Json::Obj(members) => {
                let mut refs: Vec<&(String, Json)> = members.iter().collect();
                if sorted {
                    refs.sort_by(|a, b| utf16_cmp(&a.0, &b.0));
                }
                out.push('{');
                for (i, (k, v)) in refs.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    v.write_with(out, sorted);
                }
                out.push('}');
            }
        }
    }

    /// The member `key` of an object; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value of a number written as a plain non-negative integer that fits a `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Num(n) if n.bytes().all(|c| c.is_ascii_digit()) => n.parse().ok(),
            _ => None,
        }
    }

    /// The value of any number, as the nearest `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }
}

/// Appends the decimal digits of `n`; spares the wasm the `fmt` machinery.
pub fn push_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &buf[i..] {
        out.push(d as char);
    }
}

/// Appends `s` as a JSON string literal, escaping as JCS does (lowercase `\u00xx`).
pub fn write_str(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                out.push_str("\\u00");
                out.push(HEX[(c as usize) >> 4] as char);
                out.push(HEX[(c as usize) & 15] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Orders strings by UTF-16 code units, which differs from byte order above U+FFFF.
fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

type PResult<T> = Result<T, &'static str>;

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
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
        if self.b[self.i..].starts_with(word.as_bytes()) {
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
        Ok(Json::Num(self.s[start..self.i].into()))
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
                    out.push_str(&self.s[run..self.i]);
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.s[run..self.i]);
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
                        if !self.b[self.i..].starts_with(b"\\u") {
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
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Arr(items));
                }
                None => return Err("unexpected end of input"),
                _ => return Err("expected `,` or `]`"),
            }
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
                return Err(if self.peek().is_none() { "unexpected end of input" } else { "expected `:`" });
            }
            self.i += 1;
            let v = self.value(depth)?;
            // Duplicates would make the fingerprint ambiguous (JS keeps the last one).
            if members.iter().any(|(m, _)| *m == k) {
                return Err("duplicate object key");
            }
            members.push((k, v));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Json::Obj(members));
                }
                None => return Err("unexpected end of input"),
                _ => return Err("expected `,` or `}`"),
            }
        }
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
