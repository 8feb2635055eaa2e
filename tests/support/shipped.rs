//! The module the tests run: the package `make build` writes to pkg/, as users install it.
//! page.js imports pkg/idemkey.js and runs its `init()`, which loads idemkey_bg.wasm from
//! beside it (the test runner serves the crate's directory); this file is the one place
//! the tests reach its exports (`Checkout`, `newKey`). Nothing of the crate's
//! own browser code is called: a test passes or fails on what pkg/ holds.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/tests/support/page.js")]
extern "C" {
    /// An object of the shipped module's `Checkout` class.
    #[wasm_bindgen(js_name = Checkout)]
    type Shipped;
    #[wasm_bindgen(static_method_of = Shipped, js_class = "Checkout", js_name = open, catch)]
    fn shipped_open(options: JsValue) -> Result<Shipped, JsValue>;
    #[wasm_bindgen(method, js_class = "Checkout")]
    fn submit(this: &Shipped, payload: JsValue) -> Promise;
    #[wasm_bindgen(method, js_class = "Checkout")]
    fn reset(this: &Shipped) -> bool;
    #[wasm_bindgen(method, js_class = "Checkout")]
    fn finish(this: &Shipped) -> bool;
    #[wasm_bindgen(method, js_class = "Checkout")]
    fn free(this: &Shipped);
    #[wasm_bindgen(method, getter, js_class = "Checkout")]
    fn key(this: &Shipped) -> String;
    #[wasm_bindgen(method, getter, js_class = "Checkout")]
    fn scope(this: &Shipped) -> String;
    #[wasm_bindgen(method, getter, js_class = "Checkout")]
    fn state(this: &Shipped) -> String;
    #[wasm_bindgen(method, getter, js_class = "Checkout")]
    fn storage(this: &Shipped) -> String;
    #[wasm_bindgen(method, getter, js_class = "Checkout")]
    fn attempts(this: &Shipped) -> f64;
    #[wasm_bindgen(method, getter, js_class = "Checkout", js_name = createdAt)]
    fn created_at(this: &Shipped) -> f64;
    #[wasm_bindgen(method, getter, js_class = "Checkout", js_name = expiresAt)]
    fn expires_at(this: &Shipped) -> f64;
    /// The shipped `newKey()`: a fresh UUID v4.
    #[wasm_bindgen(js_name = newKey)]
    pub fn new_key() -> String;
}

/// A `Checkout` of the shipped module, freed (`free()`) when dropped, as a Rust-side
/// checkout of the crate was: a test that drops one checks what `free()` does.
pub struct Checkout(Option<Shipped>);

impl Checkout {
    fn js(&self) -> &Shipped {
        self.0
            .as_ref()
            .expect("a checkout handed over is not used again")
    }

    /// `Checkout.open(options)`: the checkout, or what it threw.
    pub fn open(options: JsValue) -> Result<Checkout, JsValue> {
        Shipped::shipped_open(options).map(|c| Checkout(Some(c)))
    }

    /// `checkout.submit(payload)`.
    pub fn submit(&self, payload: JsValue) -> Promise {
        self.js().submit(payload)
    }

    /// `checkout.reset()`: whether the end is durable (kept for every later page).
    pub fn reset(&self) -> bool {
        self.js().reset()
    }

    /// `checkout.finish()`: whether the end is durable (kept for every later page).
    pub fn finish(&self) -> bool {
        self.js().finish()
    }

    /// `checkout.key`.
    pub fn key(&self) -> String {
        self.js().key()
    }

    /// `checkout.scope`.
    pub fn scope(&self) -> String {
        self.js().scope()
    }

    /// `checkout.state`.
    pub fn state(&self) -> String {
        self.js().state()
    }

    /// `checkout.storage`.
    pub fn storage(&self) -> String {
        self.js().storage()
    }

    /// `checkout.attempts`, which must be a whole number.
    pub fn attempts(&self) -> u32 {
        let n = self.js().attempts();
        assert!(n >= 0.0 && n.fract() == 0.0, "attempts is {n}");
        n as u32
    }

    /// `checkout.createdAt`.
    pub fn created_at(&self) -> f64 {
        self.js().created_at()
    }

    /// `checkout.expiresAt`.
    pub fn expires_at(&self) -> f64 {
        self.js().expires_at()
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.free();
        }
    }
}

/// The JS object itself, handed over without `free()`: its new owner (page JS) keeps it.
impl From<Checkout> for JsValue {
    fn from(mut c: Checkout) -> JsValue {
        c.0.take().expect("handed over once").into()
    }
}
