//! Reads a stored record's text with the browser's `JSON.parse` (parse.js `readRecord`) and
//! checks it by the core's rules ([`Record::from_fields`]): the module needs no JSON parser
//! of its own for the records it reads back.

use wasm_bindgen::prelude::*;

use super::js::text;
use crate::core::record::Record;
use crate::core::record_read::Value;
use crate::error::{Error, Result};

#[wasm_bindgen(module = "/src/browser/parse.js")]
extern "C" {
    /// The values of the core's `Field`s in a record's text, in their order (an array as
    /// `NaN`), or why the text is no record.
    #[wasm_bindgen(js_name = readRecord)]
    fn read_record(text: &str) -> JsValue;
}

/// The record a stored text holds, or `CorruptRecord` with the reason.
pub(crate) fn decode(stored: &str) -> Result<Record> {
    let a = read_record(stored);
    if let Some(why) = text(&a) {
        return Err(Error::CorruptRecord(why));
    }
    let a: js_sys::Array = a.unchecked_into();
    // `readRecord` answers in the order of `Field`.
    Record::from_fields(|f| value(&a.get(f as u32)))
}

/// One field's value as the core's rules tell values apart.
fn value(v: &JsValue) -> Value {
    if v.is_undefined() {
        Value::Missing
    } else if v.is_null() {
        Value::Null
    } else if let Some(b) = v.as_bool() {
        Value::Bool(b)
    } else if let Some(n) = v.as_f64() {
        Value::number(n)
    } else if let Some(s) = text(v) {
        Value::Str(s)
    } else {
        Value::Obj
    }
}
