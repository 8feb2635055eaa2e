//! Tiny helpers for building plain JS objects field by field (smaller than serde here).

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
