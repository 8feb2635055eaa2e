//! What a page gives its machines synchronously: the clock, random bytes, whether Web
//! Locks exist, the parsers it has (JSON, HTTP-dates), and Web Storage (synchronous in the
//! browser, so read and written in the middle of a decision rather than through a
//! command). The browser implements it over `Date.now`, `crypto.getRandomValues`,
//! `JSON.parse`, `Date.parse` and `localStorage`/`sessionStorage`; the simulator over
//! models whose tabs see each other's writes late.

use crate::core::options::StorageKind;
use crate::core::record::Record;
use crate::prelude::*;

/// A page's clock, randomness and Web Storage.
pub trait Host {
    /// Milliseconds since the epoch.
    fn now_ms(&mut self) -> f64;
    /// Fills `out` with random bytes (a CSPRNG in the browser: keys are made of them).
    fn fill_random(&mut self, out: &mut [u8]);
    /// Whether the page has the Web Locks API.
    fn web_locks(&mut self) -> bool;
    /// Whether backend `kind` can be used: `Ok(true)`, `Ok(false)` when the page has none
    /// (no window), or the browser's error when it refuses it. Memory is always there.
    fn storage_usable(&mut self, kind: StorageKind) -> Result<bool, String>;
    /// `getItem(key)` in `kind`; the error when the backend throws.
    fn storage_get(&mut self, kind: StorageKind, key: &str) -> Result<Option<String>, String>;
    /// `setItem(key, value)` in `kind`; the error when the backend throws.
    fn storage_set(&mut self, kind: StorageKind, key: &str, value: &str) -> Result<(), String>;
    /// `removeItem(key)` in `kind`; errors ignored (there is nothing better to do).
    fn storage_remove(&mut self, kind: StorageKind, key: &str);
    /// The keys of `kind` that start with `prefix` (none when the backend throws).
    fn storage_keys(&mut self, kind: StorageKind, prefix: &str) -> Vec<String>;
    /// The record a stored text holds, or `CorruptRecord` with the reason: the text's
    /// JSON read by the host's parser (the browser's own `JSON.parse`, which costs the
    /// module no bytes), its fields by [`Record::from_fields`]'s rules. By default the
    /// core's parser, [`Record::decode`].
    fn decode_record(&self, text: &str) -> crate::error::Result<Record> {
        Record::decode(text)
    }
    /// The time (ms since the epoch) of an HTTP-date from `Retry-After`, or `None` when it
    /// cannot be read: by the host's parser (the browser's own `Date.parse`, which costs
    /// the module no bytes). By default the core's strict reader,
    /// [`http_date_ms`](crate::core::retry_after::http_date_ms).
    fn http_date_ms(&mut self, value: &str, now_ms: f64) -> Option<f64> {
        crate::core::retry_after::http_date_ms(value, now_ms)
    }
}

/// A fresh UUID v4 from the host's randomness.
pub fn new_key(host: &mut impl Host) -> String {
    let mut bytes = [0u8; 16];
    host.fill_random(&mut bytes);
    crate::core::key::uuid_v4(bytes)
}

/// A number in `[0, 1)` from the host's randomness (backoff jitter).
pub fn random01(host: &mut impl Host) -> f64 {
    let mut b = [0u8; 4];
    host.fill_random(&mut b);
    u32::from_le_bytes(b) as f64 / 4_294_967_296.0
}
