//! What the first `open()` of a namespace in a page deletes: the rule, decided without the
//! browser, for each storage entry it finds.

use crate::core::ended::all_expired;
use crate::core::record::{
    parse_quarantine_key, parse_record_key, Record, QUARANTINE_RETENTION_MS,
};
use crate::error::Result;

/// Whether the sweep of the first `open()` of `namespace` in a page deletes the storage entry `storage_key` = `value` of `namespace` at
/// `now_ms`: a readable record that has expired, the marks of
/// ended attempts ([`ended_key`]) once every key they name has expired, or a quarantined
/// copy older than [`QUARANTINE_RETENTION_MS`]. Anything else (live or unreadable records,
/// keys this crate does not know) is kept.
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
