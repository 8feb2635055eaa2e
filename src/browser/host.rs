//! The browser as the machines' [`Host`]: `Date.now`, `crypto.getRandomValues`, Web Locks'
//! presence, and Web Storage through the driver (memory is the driver's page-wide map).

use crate::prelude::*;

use super::ffi;
use crate::core::machine::Host;
use crate::core::options::StorageKind;

/// The page the module runs in.
pub(crate) struct BrowserHost;

impl Host for BrowserHost {
    fn now_ms(&mut self) -> f64 {
        js_sys::Date::now()
    }

    fn fill_random(&mut self, out: &mut [u8]) {
        ffi::get_random_values(out);
    }

    fn web_locks(&mut self) -> bool {
        ffi::web_locks()
    }

    fn storage_usable(&mut self, kind: StorageKind) -> Result<bool, String> {
        if kind == StorageKind::Memory {
            return Ok(true);
        }
        ffi::storage_usable(kind.as_str()).map_err(|e| ffi::error_text(&e))
    }

    fn storage_get(&mut self, kind: StorageKind, key: &str) -> Result<Option<String>, String> {
        ffi::storage_get(kind.as_str(), key)
            .map(|v| ffi::text(&v))
            .map_err(|e| ffi::error_text(&e))
    }

    fn storage_set(&mut self, kind: StorageKind, key: &str, value: &str) -> Result<(), String> {
        ffi::storage_set(kind.as_str(), key, value).map_err(|e| ffi::error_text(&e))
    }

    fn storage_remove(&mut self, kind: StorageKind, key: &str) {
        ffi::storage_remove(kind.as_str(), key);
    }

    fn storage_keys(&mut self, kind: StorageKind, prefix: &str) -> Vec<String> {
        ffi::storage_keys(kind.as_str(), prefix)
            .iter()
            .filter_map(|k| ffi::text(&k))
            .collect()
    }
}
