//! idemkey: one idempotency key per checkout attempt, kept across retries, double-clicks,
//! refreshes and tabs, so a checkout POST is safe to repeat.
//!
//! From JavaScript (after `wasm-pack build --target web`):
//!
//! ```js
//! import init, { Checkout } from "idemkey";
//! await init();
//! const checkout = Checkout.open({ scope: "cart-42", endpoint: "/api/charges" });
//! const r = await checkout.submit({ amount: 4200, currency: "eur" });
//! ```
//!
//! The crate has a pure [`core`] (record format, fingerprint, retry policy, state machine,
//! option rules; host-tested) and, on `wasm32` only and with the `browser` feature (on by
//! default), the browser glue and the `#[wasm_bindgen]` surface (`Checkout`, `newKey`).
//! Errors are one enum,
//! [`error::Error`], turned into a JS `Error` named "IdemError" with a `code` at the boundary.
#![deny(missing_docs)]
// `unsafe` lives in one file, src/browser/ffi.rs (the allocator and the page-wide cell).
#![deny(unsafe_code)]
// The wasm build brings no std: std's panic machinery would link `core::fmt` for messages
// nobody reads (the module aborts on a panic either way).
#![cfg_attr(all(target_arch = "wasm32", not(test)), no_std)]

extern crate alloc;
// The `std-panic` build (the browser tests') links std: std's panic handler, and std's
// allocator where the `browser` feature (whose allocator is lol_alloc's) is left out.
#[cfg(all(target_arch = "wasm32", feature = "std-panic"))]
extern crate std;

/// What the standard prelude would give, from `alloc` (the wasm build is `no_std`).
#[allow(unused_imports)]
pub(crate) mod prelude {
    pub(crate) use alloc::borrow::ToOwned;
    pub(crate) use alloc::boxed::Box;
    pub(crate) use alloc::string::{String, ToString};
    pub(crate) use alloc::vec;
    pub(crate) use alloc::vec::Vec;
}

/// The pure core: record format, fingerprint, retry policy, state machine, options (no web-sys).
pub mod core;
/// The crate's error enum and `Result` alias.
pub mod error;

#[cfg(all(target_arch = "wasm32", feature = "browser"))]
mod api;
#[cfg(all(target_arch = "wasm32", feature = "browser"))]
mod browser;

#[cfg(all(target_arch = "wasm32", feature = "browser"))]
pub use api::{new_key_string as new_key, Checkout};

/// A panic aborts the module (`unreachable` traps in the calling JS). std's handler would do
/// the same after formatting a message to a console a wasm module does not have; the
/// `std-panic` feature leaves the handler to std, which a test harness links. The release
/// build never calls it (its core is built with panic=immediate-abort, which traps where a
/// panic starts): it serves a build of the crate without the Makefile's flags.
#[cfg(all(target_arch = "wasm32", not(test), not(feature = "std-panic")))]
#[panic_handler]
fn panic(_: &::core::panic::PanicInfo) -> ! {
    ::core::arch::wasm32::unreachable()
}
