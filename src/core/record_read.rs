//! Reading a stored record: the rules its fields must meet, whichever JSON parser read the
//! text. On the host (and in the tests) [`Record::decode`] parses with the core's parser;
//! the wasm build parses with the browser's `JSON.parse` and hands the values over field by
//! field to [`Record::from_fields`], so the module carries no JSON parser of its own. Both
//! end in the same checks, with the same reasons.

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

/// The fields [`Record::from_fields`] reads, in its order: the record's own, then those of
/// its `response` (absent when `response` is not an object).
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

/// How many of [`FIELDS`] are the record's own; the rest are its response's.
pub const OWN_FIELDS: usize = 11;

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
        Record::from_fields(|name| {
            let own = FIELDS[..OWN_FIELDS].contains(&name);
            Value::of(if own { j.get(name) } else { response.and_then(|r| r.get(name)) })
        })
    }

    /// The record that a stored JSON object describes, or `CorruptRecord` with the first
    /// reason it is not one. `field` gives the value of each of [`FIELDS`] by name; each
    /// is asked for once at most, in the order of the checks.
    pub fn from_fields(field: impl FnMut(&'static str) -> Value) -> Result<Record> {
        Fields(field).record().map_err(Corrupt::into_error)
    }
}

/// The fields of a stored record, read by name as the checks need them.
struct Fields<F>(F);

impl<F: FnMut(&'static str) -> Value> Fields<F> {
    fn int(&mut self, name: &'static str, max: u64) -> core::result::Result<u64, Corrupt> {
        int((self.0)(name), name, max)
    }

    fn time(&mut self, name: &'static str) -> core::result::Result<f64, Corrupt> {
        self.int(name, MAX_SAFE).map(|n| n as f64)
    }

    fn string(&mut self, name: &'static str) -> core::result::Result<String, Corrupt> {
        match (self.0)(name) {
            Value::Str(s) => Ok(s),
            Value::Missing => Err(Corrupt(name, MISSING)),
            _ => Err(Corrupt(name, WRONG_TYPE)),
        }
    }

    fn record(&mut self) -> core::result::Result<Record, Corrupt> {
        match (self.0)("v") {
            Value::Missing => return Err(Corrupt("v", MISSING)),
            Value::Int(n) if n == RECORD_VERSION as u64 => {}
            _ => return Err(Corrupt("", "unsupported version")),
        }
        // Optional: records written before it existed have none.
        let rev = match (self.0)("rev") {
            Value::Missing => 0,
            rev => int(rev, "rev", MAX_SAFE)?,
        };
        let key = self.string("key")?;
        if !is_uuid(&key) {
            return Err(Corrupt("key", "not a UUID"));
        }
        let scope = self.string("scope")?;
        if scope.is_empty() {
            return Err(Corrupt("scope", "empty"));
        }
        let fingerprint = match (self.0)("fp") {
            Value::Missing => return Err(Corrupt("fp", MISSING)),
            Value::Null => None,
            Value::Str(s) if !s.is_empty() => Some(s),
            _ => return Err(Corrupt("fp", WRONG_TYPE)),
        };
        let state = State::parse(&self.string("state")?).ok_or(Corrupt("state", "unknown state"))?;
        if state != State::Fresh && fingerprint.is_none() {
            return Err(Corrupt("fp", "missing for a sent attempt"));
        }
        let attempts = self.int("attempts", u32::MAX as u64)? as u32;
        let created_at = self.time("createdAt")?;
        let expires_at = self.time("expiresAt")?;
        let updated_at = self.time("updatedAt")?;
        if expires_at < created_at {
            return Err(Corrupt("expiresAt", "before createdAt"));
        }
        let response = match (self.0)("response") {
            Value::Missing => return Err(Corrupt("response", MISSING)),
            Value::Null => None,
            Value::Obj => {
                let status = self.int("status", 599)?;
                if status < 100 {
                    return Err(Corrupt("status", "out of range"));
                }
                let body = self.string("body")?;
                let replayed = match (self.0)("replayed") {
                    Value::Bool(b) => b,
                    Value::Missing => return Err(Corrupt("replayed", MISSING)),
                    _ => return Err(Corrupt("replayed", WRONG_TYPE)),
                };
                Some(StoredResponse {
                    status: status as u16,
                    body,
                    replayed,
                })
            }
            _ => return Err(Corrupt("response", WRONG_TYPE)),
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
        Value::Missing => Err(Corrupt(name, MISSING)),
        _ => Err(Corrupt(name, WRONG_TYPE)),
    }
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
