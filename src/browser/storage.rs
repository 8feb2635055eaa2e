//! Where records live: localStorage, sessionStorage or a page-wide memory map, with the
//! fallback chain local -> session -> memory whenever a backend throws (SecurityError when
//! storage is disabled, QuotaExceededError, Safari private mode).

use crate::prelude::*;
use core::cell::Cell;

use js_sys::Array;
use wasm_bindgen::prelude::*;
use web_sys::Storage;

use crate::core::options::StorageKind;

use super::js::{error_text, text};
use super::page::PageCell;

/// The memory backend: one list of `(key, value)` per page, shared by every checkout
/// (a handful of entries: a Vec costs fewer bytes than a map), in no particular order.
static MEMORY: PageCell<Vec<(String, String)>> = PageCell::new(Vec::new());

/// A backend change: `(from, to, reason)`, reported as a `storage-fallback` event.
pub(crate) struct Fallback {
    /// The backend that threw.
    pub(crate) from: &'static str,
    /// The backend now in use.
    pub(crate) to: &'static str,
    /// The browser's error text.
    pub(crate) reason: String,
}

/// The Web Storage object of a kind, `None` for memory or a page with no window (Node, a
/// worker), or the error text when the browser refuses it.
fn web_storage(kind: StorageKind) -> Result<Option<Storage>, String> {
    if kind == StorageKind::Memory {
        return Ok(None);
    }
    match web_storage_js(kind == StorageKind::Local) {
        Ok(s) if s.is_null() => Ok(None),
        Ok(s) if s.is_undefined() => Err("storage unavailable".into()),
        Ok(s) => Ok(Some(s.unchecked_into())),
        Err(e) => Err(error_text(&e)),
    }
}

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// `localStorage` or `sessionStorage`: null without a window, undefined when the
    /// browser has none to give; throws what the browser throws when it refuses it.
    #[wasm_bindgen(catch, js_name = webStorage)]
    fn web_storage_js(local: bool) -> Result<JsValue, JsValue>;
    /// One call on a Web Storage object (`op`: 0 getItem, 1 setItem, 2 removeItem, 3 the keys
    /// starting with `key`); throws what the browser throws.
    #[wasm_bindgen(catch, js_name = storageOp)]
    fn storage_op(s: &Storage, op: u8, key: &str, value: &str) -> Result<JsValue, JsValue>;
}

/// `getItem`.
fn get_item(s: &Storage, key: &str) -> Result<Option<String>, JsValue> {
    storage_op(s, 0, key, "").map(|v| text(&v))
}

/// `setItem`.
fn set_item(s: &Storage, key: &str, value: &str) -> Result<(), JsValue> {
    storage_op(s, 1, key, value).map(drop)
}

/// `removeItem`; whether it went through (callers that cannot do better ignore it).
fn remove_item(s: &Storage, key: &str) -> bool {
    storage_op(s, 2, key, "").is_ok()
}

/// The keys that start with `prefix`, as a JS array made before any is removed; none when
/// the backend throws.
fn keys(s: &Storage, prefix: &str) -> Array {
    storage_op(s, 3, prefix, "").map_or_else(|_| Array::new(), JsCast::unchecked_into)
}

fn next(kind: StorageKind) -> StorageKind {
    match kind {
        StorageKind::Local => StorageKind::Session,
        _ => StorageKind::Memory,
    }
}

/// One checkout's storage: the backend in use, which only ever moves down the chain.
pub(crate) struct Store {
    kind: Cell<StorageKind>,
}

impl Store {
    /// Opens `wanted`, probing it with a set, get and remove of `probe_key`; each backend
    /// that throws adds a [`Fallback`] to `out` and the next one is tried.
    pub(crate) fn open(wanted: StorageKind, probe_key: &str, out: &mut Vec<Fallback>) -> Store {
        let mut kind = wanted;
        while kind != StorageKind::Memory {
            // A write and a read: storage that takes writes but throws on reads (or the
            // reverse) would lose the record the next page looks for.
            let probed = web_storage(kind).and_then(|s| {
                let s = s.ok_or_else(|| String::from("no window"))?;
                set_item(&s, probe_key, "1")
                    .and_then(|()| get_item(&s, probe_key))
                    .map_err(|e| error_text(&e))?;
                remove_item(&s, probe_key);
                Ok(())
            });
            let Err(reason) = probed else { break };
            let to = next(kind);
            out.push(Fallback {
                from: kind.as_str(),
                to: to.as_str(),
                reason,
            });
            kind = to;
        }
        Store {
            kind: Cell::new(kind),
        }
    }

    /// The backend in use.
    pub(crate) fn kind(&self) -> StorageKind {
        self.kind.get()
    }

    /// Whether a `storage` event's area is this store's backend.
    pub(crate) fn is_area(&self, area: &JsValue) -> bool {
        match web_storage(self.kind.get()) {
            Ok(Some(mine)) => js_sys::Object::is(&mine, area),
            _ => false,
        }
    }

    /// Reads `key`; a backend that throws on read counts as empty.
    pub(crate) fn get(&self, key: &str) -> Option<String> {
        peek(self.kind.get(), key, false)
    }

    /// Writes `key`; when the backend throws, moves down the chain (dropping the stale copy
    /// where possible) and writes there. Returns the fallbacks taken.
    pub(crate) fn set(&self, key: &str, value: &str) -> Vec<Fallback> {
        let mut out = Vec::new();
        loop {
            let from = self.kind.get();
            let mut reason = match web_storage(from) {
                Ok(Some(s)) => match set_item(&s, key, value) {
                    Ok(()) => return out,
                    Err(e) => {
                        remove_item(&s, key);
                        error_text(&e)
                    }
                },
                Err(r) => r,
                Ok(None) => {
                    peek(StorageKind::Memory, key, true);
                    MEMORY.with(|m| m.borrow_mut().push((key.into(), value.into())));
                    return out;
                }
            };
            let mut to = next(from);
            while to != StorageKind::Memory {
                match web_storage(to) {
                    Ok(Some(_)) => break,
                    Ok(None) => {}
                    Err(r) => reason = r,
                }
                to = next(to);
            }
            self.kind.set(to);
            out.push(Fallback {
                from: from.as_str(),
                to: to.as_str(),
                reason,
            });
        }
    }

    /// Removes `key` from every backend, where a fallback may have left a copy (errors
    /// ignored: there is nothing better to do).
    pub(crate) fn remove(&self, key: &str) {
        for kind in ALL {
            peek(kind, key, true);
        }
    }
}

/// Every backend, best first.
pub(crate) const ALL: [StorageKind; 3] = [
    StorageKind::Local,
    StorageKind::Session,
    StorageKind::Memory,
];

/// `key` in the backend `kind` (`None` when absent or when the backend throws); with
/// `take`, also removed from it (errors ignored: there is nothing better to do).
pub(crate) fn peek(kind: StorageKind, key: &str, take: bool) -> Option<String> {
    match web_storage(kind) {
        Ok(Some(s)) => {
            let v = get_item(&s, key).ok().flatten();
            if take {
                remove_item(&s, key);
            }
            v
        }
        Ok(None) if kind == StorageKind::Memory => MEMORY.with(|m| {
            let mut m = m.borrow_mut();
            let i = m.iter().position(|(k, _)| k == key)?;
            Some(if take {
                m.swap_remove(i).1
            } else {
                m[i].1.clone()
            })
        }),
        _ => None,
    }
}

/// Removes, from the backend `kind`, the entries under `prefix` for which `drop(key, value)`
/// says so; returns how many went.
pub(crate) fn remove_where(
    kind: StorageKind,
    prefix: &str,
    drop: impl Fn(&str, &str) -> bool,
) -> u32 {
    let mut n = 0;
    match web_storage(kind) {
        Ok(Some(s)) => {
            // Keys first: removing while walking by index would skip entries.
            let keys = keys(&s, prefix);
            for i in 0..keys.length() {
                let Some(k) = text(&keys.get(i)) else {
                    continue;
                };
                if get_item(&s, &k)
                    .ok()
                    .flatten()
                    .is_some_and(|v| drop(&k, &v))
                {
                    n += remove_item(&s, &k) as u32;
                }
            }
        }
        Ok(None) if kind == StorageKind::Memory => MEMORY.with(|m| {
            let mut m = m.borrow_mut();
            // By index with `swap_remove` (which `peek` links too), not `retain`: its two
            // loops weigh more, for a handful of entries. The last entry takes the place of
            // the one removed and is looked at next.
            let mut i = 0;
            while i < m.len() {
                let (k, v) = &m[i];
                if k.starts_with(prefix) && drop(k, v) {
                    m.swap_remove(i);
                    n += 1;
                } else {
                    i += 1;
                }
            }
        }),
        _ => {}
    }
    n
}
