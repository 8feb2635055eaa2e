//! The browser tests of the idemkey module (wasm-bindgen-test), one file per concern, built
//! as one test binary: scripts/wasm-test.sh runs it in one page per browser, where a binary
//! per file paid a browser session and a page load for each. The tests of a file share that
//! page with every other file's: each makes its own customer, scope and namespace, and puts
//! back what it patches in the page (`restore`, `repair`), so none depends on a page of its
//! own.
#![cfg(target_arch = "wasm32")]

#[path = "../support/mod.rs"]
mod support;

mod alloc;
mod broken_indexeddb;
mod broken_storage;
mod expiry;
mod freed;
mod local;
mod lock;
mod no_locks;
mod one_page;
mod page;
mod request;
mod retry;
mod storage;
mod submit;
mod tabs;
mod two_baskets;
mod waits;

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
