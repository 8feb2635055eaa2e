//! Tiny helpers for JS values: building plain objects field by field (smaller than serde
//! here), reading a property, the text of a thrown value.

use crate::prelude::*;
use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

/// A plain JS object under construction.
pub(crate) struct Obj(Object);

impl Obj {
    /// An empty `{}`.
    pub(crate) fn new() -> Obj {
        Obj(Object::new())
    }
    /// Sets `name` to any value (setting a data property on a plain object cannot fail).
    pub(crate) fn set(self, name: &str, value: impl Into<JsValue>) -> Obj {
        let _ = Reflect::set(&self.0, &JsValue::from_str(name), &value.into());
        self
    }
    /// The finished object.
    pub(crate) fn done(self) -> JsValue {
        self.0.into()
    }
}

/// `obj[name]`, or `undefined` when `obj` is not an object or the getter throws.
pub(crate) fn get(obj: &JsValue, name: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// `name: message` of a thrown JS value (DOMException, Error), or a fixed text.
pub(crate) fn error_text(e: &JsValue) -> String {
    let mut s = get(e, "name").as_string().unwrap_or_default();
    if let Some(m) = get(e, "message").as_string() {
        if !s.is_empty() {
            s.push_str(": ");
        }
        s.push_str(&m);
    }
    if s.is_empty() {
        s.push_str("unknown error");
    }
    s
}
