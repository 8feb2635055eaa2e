//! The browser side: the thin driver (driver.js, with storage.js for Web Storage and idb.js
//! for IndexedDB) that runs the machines' commands with the platform's own async, the one
//! FFI file where JavaScript and Rust meet, the browser as the machines' host, the page's
//! live scopes, and the options object read. Every decision is in `core`.

#[allow(unsafe_code)]
pub(crate) mod ffi;
pub(crate) mod host;
pub(crate) mod live;
pub(crate) mod options;
