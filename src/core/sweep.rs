//! What the first `open()` of a namespace in a page deletes: the rule, decided without the
//! browser, for each storage entry it finds.

use crate::core::ended::all_expired;
use crate::core::record::{
    parse_quarantine_key, parse_record_key, Record, QUARANTINE_RETENTION_MS,
};
use crate::error::Result;
use crate::prelude::*;

/// Whether the sweep of the first `open()` of `namespace` in a page deletes the storage
/// entry `storage_key` = `value` of `namespace` at `now_ms`: a readable record that has
/// expired, the marks of ended attempts
/// ([`ended_key`](crate::core::record::ended_key)) once every key they name has expired,
/// or a quarantined copy older than [`QUARANTINE_RETENTION_MS`]. Anything else (live or
/// unreadable records, the flags of [`flag_due`], keys this crate does not know) is kept.
///
/// `decode` reads a record's text ([`Record::decode`] on the host, the browser's parser in
/// the wasm).
pub fn sweep_due(
    namespace: &str,
    storage_key: &str,
    value: &str,
    now_ms: f64,
    decode: impl FnOnce(&str) -> Result<Record>,
) -> bool {
    let after = |mid: &str| {
        storage_key
            .strip_prefix(namespace)
            .and_then(|rest| rest.strip_prefix(mid))
            .is_some_and(|scope| !scope.is_empty())
    };
    if after(":ended:") {
        return all_expired(value, now_ms);
    }
    if parse_record_key(namespace, storage_key).is_some() {
        return decode(value).is_ok_and(|r| r.is_expired(now_ms));
    }
    parse_quarantine_key(namespace, storage_key)
        .is_some_and(|(_, at)| now_ms - at as f64 >= QUARANTINE_RETENTION_MS)
}

/// Whether the sweep deletes the storage entry `storage_key` of `namespace`, holding
/// `value`, one of the entries `listed` in its backend at `now_ms`: the flag that a scope
/// has ended attempts there ([`ends_key`](crate::core::record::ends_key)) when no entry of
/// that scope's marks is listed with it and the end it was last written for (its `value`,
/// that end's mark) has expired. An end writes the flag, then its mark: another page can
/// list the flag before the mark reaches it, and a flag deleted then would hide a live mark
/// from every tab's listing while the check before a try still reads the mark's own entry
/// (a submit that goes on with its attempt would be given up at each Pay). A mark the same
/// sweep deletes still counts (the next page's sweep deletes the flag); so does one of a
/// scope whose name goes on after a `:`, which starts the same: a flag left costs a
/// listing, never a mark.
pub fn flag_due(
    namespace: &str,
    storage_key: &str,
    value: &str,
    now_ms: f64,
    listed: &[String],
) -> bool {
    let scope = storage_key
        .strip_prefix(namespace)
        .and_then(|rest| rest.strip_prefix(":ends:"))
        .filter(|scope| !scope.is_empty());
    let Some(scope) = scope else {
        return false;
    };
    all_expired(value, now_ms) && !lists_marks(namespace, scope, listed)
}

/// Whether the storage keys `listed` hold a mark of `scope` in `namespace`: an entry of
/// [`ended_key`](crate::core::record::ended_key), then `:` (or of a scope whose name goes on
/// after a `:`, which starts the same).
pub fn lists_marks(namespace: &str, scope: &str, listed: &[String]) -> bool {
    listed.iter().any(|k| {
        k.strip_prefix(namespace)
            .and_then(|rest| rest.strip_prefix(":ended:"))
            .and_then(|rest| rest.strip_prefix(scope))
            .is_some_and(|rest| rest.starts_with(':'))
    })
}
