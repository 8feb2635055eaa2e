//! Fresh idempotency keys from the browser's CSPRNG (`crypto.getRandomValues`, also there
//! in insecure contexts and in Node, unlike `crypto.randomUUID`).

use wasm_bindgen::prelude::*;

use crate::core::key::uuid_v4;
use crate::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    fn get_random_values(buf: &mut [u8]);
}

/// A fresh UUID v4.
pub(crate) fn new_key() -> String {
    let mut bytes = [0u8; 16];
    get_random_values(&mut bytes);
    uuid_v4(bytes)
}
