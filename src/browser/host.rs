//! The browser as the machines' [`Host`]: `Date.now`, `crypto.getRandomValues`, Web Locks'
//! presence, `JSON.parse` and `Date.parse`, and Web Storage through the driver (memory is
//! the driver's page-wide map).

use crate::prelude::*;
use wasm_bindgen::JsValue;

use super::ffi;
use crate::core::machine::Host;
use crate::core::options::StorageKind;
use crate::core::record::Record;
use crate::core::record_read::Value;
use crate::error::{Error, Result as IdemResult};

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
        ffi::storage_usable(kind as u32).map_err(|e| ffi::error_text(&e))
    }

    fn storage_get(&mut self, kind: StorageKind, key: &str) -> Result<Option<String>, String> {
        ffi::storage_get(kind as u32, key)
            .map(|v| ffi::text(&v))
            .map_err(|e| ffi::error_text(&e))
    }

    fn storage_set(&mut self, kind: StorageKind, key: &str, value: &str) -> Result<(), String> {
        ffi::storage_set(kind as u32, key, value).map_err(|e| ffi::error_text(&e))
    }

    fn storage_remove(&mut self, kind: StorageKind, key: &str) {
        ffi::storage_remove(kind as u32, key);
    }

    fn storage_keys(&mut self, kind: StorageKind, prefix: &str) -> Vec<String> {
        // By index, as options.rs reads the headers: `Array::iter` links an import of its own.
        let keys = ffi::storage_keys(kind as u32, prefix);
        (0..keys.length())
            .filter_map(|i| ffi::text(&keys.get(i)))
            .collect()
    }

    fn http_date_ms(&mut self, value: &str, _now_ms: f64) -> Option<f64> {
        let t = ffi::date_ms(value);
        (!t.is_nan()).then_some(t)
    }

    fn decode_record(&self, text: &str) -> IdemResult<Record> {
        let o = ffi::parse_object(text);
        if let Some(why) = ffi::text(&o) {
            return Err(Error::CorruptRecord(why));
        }
        let response = ffi::member(&o, "response");
        Record::from_fields(|f| {
            let of = if f.in_response() { &response } else { &o };
            value(ffi::member(of, f.name()))
        })
    }
}

/// What a member of a parsed record holds, as the record's rules tell values apart. One
/// call to the driver's `kind`: asking `is_undefined`, `is_null`, `as_bool`, `as_f64` and
/// `Array::is_array` in turn linked an import and its glue each.
fn value(v: JsValue) -> Value {
    match ffi::kind(&v) {
        0 => Value::Missing,
        1 => Value::Null,
        k @ (2 | 3) => Value::Bool(k == 3),
        4 => Value::number(v.unchecked_into_f64()),
        5 => Value::Str(ffi::text(&v).unwrap_or_default()),
        6 => Value::Other,
        _ => Value::Obj,
    }
}
