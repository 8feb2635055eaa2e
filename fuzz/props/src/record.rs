//! `Record::decode` and `Record::encode`, on stored texts and on records built field by field.
//!
//! Properties: whatever decodes is version 1 and re-encodes to a text that decodes to the
//! same record (decode(encode(r)) == r); a record built from arbitrary fields decodes back
//! exactly when it is valid, and is refused with a reason otherwise, whatever its version.

use arbitrary::{Result, Unstructured};
use idemkey::core::record::{is_uuid, Record, StoredResponse, RECORD_VERSION};
use idemkey::core::state::State;
use idemkey::error::Error;

/// Largest integer a JS number holds exactly.
const MAX_SAFE: u64 = (1 << 53) - 1;

/// Decodes `data` as a stored record's text.
pub fn check_decode(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Record::decode(text) {
        Ok(r) => {
            assert_eq!(r.version, RECORD_VERSION);
            assert!(is_uuid(&r.key) && !r.scope.is_empty());
            assert!(r.expires_at >= r.created_at);
            let enc = r.encode();
            let back = Record::decode(&enc).unwrap_or_else(|e| panic!("{enc:?}: {e}"));
            assert_eq!(back, r, "decode(encode(r)) != r for {text:?}");
            assert_eq!(back.encode(), enc, "encode is not stable");
        }
        Err(Error::CorruptRecord(reason)) => assert!(!reason.is_empty()),
        Err(e) => panic!("decode gave a non-corrupt error {e:?} for {text:?}"),
    }
}

/// Builds a record from arbitrary fields, encodes it and decodes the text.
pub fn check_encode(data: &[u8]) {
    let Ok(r) = record(&mut Unstructured::new(data)) else {
        return;
    };
    let enc = r.encode();
    match (valid(&r), Record::decode(&enc)) {
        (true, Ok(back)) => assert_eq!(back, r, "decode(encode(r)) != r: {enc}"),
        (false, Err(Error::CorruptRecord(_))) => {}
        (ok, got) => panic!("record {r:?} (valid: {ok}) encoded as {enc} decoded to {got:?}"),
    }
}

/// What decode must accept: the format's rules, on a record whose times are whole ms.
fn valid(r: &Record) -> bool {
    r.version == RECORD_VERSION
        && is_uuid(&r.key)
        && !r.scope.is_empty()
        && r.fingerprint.as_ref().is_none_or(|f| !f.is_empty())
        && (r.state == State::Fresh || r.fingerprint.is_some())
        && r.expires_at >= r.created_at
        && r.rev <= MAX_SAFE
        && [r.created_at, r.expires_at, r.updated_at]
            .iter()
            .all(|t| *t <= MAX_SAFE as f64)
        && r.response
            .as_ref()
            .is_none_or(|s| (100..=599).contains(&s.status))
}

fn record(u: &mut Unstructured) -> Result<Record> {
    let version = if u.ratio(7, 8)? {
        RECORD_VERSION
    } else {
        u.arbitrary()?
    };
    let key = if u.ratio(7, 8)? {
        uuid(u)?
    } else {
        u.arbitrary()?
    };
    let state = *u.choose(&[
        State::Fresh,
        State::Pending,
        State::Succeeded,
        State::Failed,
    ])?;
    let fingerprint = if u.ratio(3, 4)? {
        Some(u.arbitrary()?)
    } else {
        None
    };
    let created_at = time(u)?;
    let expires_at = if u.ratio(7, 8)? {
        created_at + u.int_in_range(0..=31_536_000_000u64)? as f64
    } else {
        time(u)?
    };
    let response = if u.arbitrary()? {
        Some(StoredResponse {
            status: if u.ratio(7, 8)? {
                u.int_in_range(100..=599)?
            } else {
                u.arbitrary()?
            },
            body: u.arbitrary()?,
            replayed: u.arbitrary()?,
        })
    } else {
        None
    };
    let rev = if u.ratio(15, 16)? {
        u.int_in_range(0..=MAX_SAFE)?
    } else {
        u.arbitrary()?
    };
    Ok(Record {
        version,
        rev,
        key,
        scope: u.arbitrary()?,
        fingerprint,
        state,
        attempts: u.arbitrary()?,
        created_at,
        expires_at,
        updated_at: time(u)?,
        response,
    })
}

/// A whole-ms time, mostly within what JS holds exactly.
fn time(u: &mut Unstructured) -> Result<f64> {
    Ok(if u.ratio(15, 16)? {
        u.int_in_range(0..=MAX_SAFE)? as f64
    } else {
        u.int_in_range(MAX_SAFE + 1..=u64::MAX >> 8)? as f64
    })
}

fn uuid(u: &mut Unstructured) -> Result<String> {
    const HEX: &[u8] = b"0123456789abcdefABCDEF";
    let mut s = String::with_capacity(36);
    for i in 0..36 {
        s.push(match i {
            8 | 13 | 18 | 23 => '-',
            _ => *u.choose(HEX)? as char,
        });
    }
    Ok(s)
}
