//! Reading a stored record: the rules its fields must meet, in [`Record::from_fields`],
//! which gives the record its fields describe or the first reason they describe none. The
//! fields come from a JSON parser: the browser's `JSON.parse` in the module (its host's
//! `decode_record`), and on the host [`Record::decode`], with the core's own parser (which
//! also refuses duplicate keys, lone surrogate escapes and nesting past 64 levels, none of
//! which idemkey writes).

use crate::core::json::Json;
use crate::core::record::{is_uuid, Record, StoredResponse, MAX_SAFE, RECORD_VERSION};
use crate::core::state::State;
use crate::error::{Error, Result};
use crate::prelude::*;

/// What one field of a stored record holds, as the rules tell values apart.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// The field is absent.
    Missing,
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number from 0 to 2^53 - 1 (what a JS number holds exactly).
    Int(u64),
    /// A string.
    Str(String),
    /// An object.
    Obj,
    /// Anything else: an array, a fraction, a negative or too large number.
    Other,
}

impl Value {
    /// The value of a JSON number: [`Value::Int`] for a whole number in range, else
    /// [`Value::Other`].
    pub fn number(n: f64) -> Value {
        // `as u64` saturates and drops the fraction: equal only for a whole number in range.
        if n >= 0.0 && n <= MAX_SAFE as f64 && (n as u64) as f64 == n {
            Value::Int(n as u64)
        } else {
            Value::Other
        }
    }

    /// The value of `j` (`None`: absent), read by the core's parser.
    fn of(j: Option<&Json>) -> Value {
        match j {
            None => Value::Missing,
            Some(Json::Null) => Value::Null,
            Some(Json::Bool(b)) => Value::Bool(*b),
            Some(n @ Json::Num(_)) => n.as_f64().map_or(Value::Other, Value::number),
            Some(Json::Str(s)) => Value::Str(s.clone()),
            Some(Json::Obj(_)) => Value::Obj,
            Some(Json::Arr(_)) => Value::Other,
        }
    }
}

/// A field of a stored record that [`Record::from_fields`] reads: the record's own, then
/// those of its `response` (absent when `response` is not an object).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `v`.
    V,
    /// `rev`.
    Rev,
    /// `key`.
    Key,
    /// `scope`.
    Scope,
    /// `fp`.
    Fp,
    /// `state`.
    State,
    /// `attempts`.
    Attempts,
    /// `createdAt`.
    CreatedAt,
    /// `expiresAt`.
    ExpiresAt,
    /// `updatedAt`.
    UpdatedAt,
    /// `response`.
    Response,
    /// `response.status`.
    Status,
    /// `response.body`.
    Body,
    /// `response.replayed`.
    Replayed,
}

/// The JSON names of the [`Field`]s, in their order.
pub const FIELDS: [&str; 14] = [
    "v",
    "rev",
    "key",
    "scope",
    "fp",
    "state",
    "attempts",
    "createdAt",
    "expiresAt",
    "updatedAt",
    "response",
    "status",
    "body",
    "replayed",
];

impl Field {
    /// Its JSON name.
    pub fn name(self) -> &'static str {
        FIELDS[self as usize]
    }

    /// Whether it is a field of the record's `response`.
    pub fn in_response(self) -> bool {
        self as usize > Field::Response as usize
    }
}

impl Record {
    /// Reads a stored record; anything unexpected is `CorruptRecord` with the reason,
    /// so the caller can set the text aside instead of trusting it.
    pub fn decode(text: &str) -> Result<Record> {
        let j = Json::parse_why(text).map_err(|e| {
            let mut s = String::from("not JSON: ");
            s.push_str(e);
            Error::CorruptRecord(s)
        })?;
        if !matches!(j, Json::Obj(_)) {
            return Err(Error::CorruptRecord("not a JSON object".into()));
        }
        let response = j.get("response");
        Record::from_fields(|f| {
            let of = if f.in_response() { response } else { Some(&j) };
            Value::of(of.and_then(|o| o.get(f.name())))
        })
    }

    /// The record that a stored JSON object describes, or `CorruptRecord` with the first
    /// reason it is not one. `field` gives the value of each [`Field`]; each is asked for
    /// once at most, in the order of the checks.
    pub fn from_fields(field: impl FnMut(Field) -> Value) -> Result<Record> {
        Fields(field).record().map_err(Corrupt::into_error)
    }
}

/// The fields of a stored record, read as the checks need them.
struct Fields<F>(F);

impl<F: FnMut(Field) -> Value> Fields<F> {
    fn int(&mut self, f: Field, max: u64) -> core::result::Result<u64, Corrupt> {
        int((self.0)(f), f.name(), max)
    }

    fn time(&mut self, f: Field) -> core::result::Result<f64, Corrupt> {
        self.int(f, MAX_SAFE).map(|n| n as f64)
    }

    /// A whole number added to version 1 after its first release (`rev`):
    /// optional, since records written before it have none; 0 then.
    fn added(&mut self, f: Field) -> core::result::Result<u64, Corrupt> {
        match (self.0)(f) {
            Value::Missing => Ok(0),
            v => int(v, f.name(), MAX_SAFE),
        }
    }

    fn string(&mut self, f: Field) -> core::result::Result<String, Corrupt> {
        match (self.0)(f) {
            Value::Str(s) => Ok(s),
            v => Err(refused(&v, f.name())),
        }
    }

    fn record(&mut self) -> core::result::Result<Record, Corrupt> {
        match (self.0)(Field::V) {
            Value::Missing => return Err(Corrupt("v", MISSING)),
            Value::Int(n) if n == RECORD_VERSION as u64 => {}
            _ => return Err(Corrupt("", "unsupported version")),
        }
        let rev = self.added(Field::Rev)?;
        let key = self.string(Field::Key)?;
        if !is_uuid(&key) {
            return Err(Corrupt("key", "not a UUID"));
        }
        let scope = self.string(Field::Scope)?;
        if scope.is_empty() {
            return Err(Corrupt("scope", "empty"));
        }
        let fingerprint = match (self.0)(Field::Fp) {
            Value::Null => None,
            Value::Str(s) if !s.is_empty() => Some(s),
            v => return Err(refused(&v, "fp")),
        };
        let state =
            State::parse(&self.string(Field::State)?).ok_or(Corrupt("state", "unknown state"))?;
        if state != State::Fresh && fingerprint.is_none() {
            return Err(Corrupt("fp", "missing for a sent attempt"));
        }
        let attempts = self.int(Field::Attempts, u32::MAX as u64)? as u32;
        let created_at = self.time(Field::CreatedAt)?;
        let expires_at = self.time(Field::ExpiresAt)?;
        let updated_at = self.time(Field::UpdatedAt)?;
        if expires_at < created_at {
            return Err(Corrupt("expiresAt", "before createdAt"));
        }
        let response = match (self.0)(Field::Response) {
            Value::Null => None,
            Value::Obj => {
                let status = self.int(Field::Status, 599)?;
                if status < 100 {
                    return Err(Corrupt("status", "out of range"));
                }
                let body = self.string(Field::Body)?;
                let replayed = match (self.0)(Field::Replayed) {
                    Value::Bool(b) => b,
                    v => return Err(refused(&v, "replayed")),
                };
                Some(StoredResponse {
                    status: status as u16,
                    body,
                    replayed,
                })
            }
            v => return Err(refused(&v, "response")),
        };
        Ok(Record {
            version: RECORD_VERSION,
            rev,
            key,
            scope,
            fingerprint,
            state,
            attempts,
            created_at,
            expires_at,
            updated_at,
            response,
        })
    }
}

/// `v`, the value of field `name`, as a whole number up to `max`.
fn int(v: Value, name: &'static str, max: u64) -> core::result::Result<u64, Corrupt> {
    match v {
        Value::Int(n) if n <= max => Ok(n),
        v => Err(refused(&v, name)),
    }
}

/// Why field `name` is refused when `v` is not what its check takes: missing, or of the
/// wrong type (or out of range).
fn refused(v: &Value, name: &'static str) -> Corrupt {
    Corrupt(
        name,
        if matches!(v, Value::Missing) {
            MISSING
        } else {
            WRONG_TYPE
        },
    )
}

/// Why a stored record is unreadable: the field ("" for the record as a whole) and what is
/// wrong with it. Two static texts, so a failed check returns two words, not an [`Error`].
struct Corrupt(&'static str, &'static str);

/// [`Corrupt`]'s reason for a field that is absent.
const MISSING: &str = "missing";
/// [`Corrupt`]'s reason for a field of the wrong JSON type or out of its range.
const WRONG_TYPE: &str = "wrong type";

impl Corrupt {
    /// `CorruptRecord` with the reason in words: "missing field `v`", "field `key`: not a
    /// UUID", or the record-wide reason as it is.
    fn into_error(self) -> Error {
        let Corrupt(name, why) = self;
        let mut s = String::new();
        if name.is_empty() {
            s.push_str(why);
        } else if why == MISSING {
            s.push_str("missing field `");
            s.push_str(name);
            s.push('`');
        } else {
            s.push_str("field `");
            s.push_str(name);
            s.push_str("`: ");
            s.push_str(why);
        }
        Error::CorruptRecord(s)
    }
}
