//! Where records live: localStorage, sessionStorage or a page-wide memory map, with the
//! fallback chain local -> session -> memory whenever a backend throws (SecurityError when
//! storage is disabled, QuotaExceededError, Safari private mode).

use crate::prelude::*;
use core::cell::{Cell, RefCell};

use crate::core::options::StorageKind;

use super::js::error_text;
use super::page::PageCell;

/// The memory backend: one list of `(key, value)` per page, shared by every checkout
/// (a handful of entries: a Vec costs fewer bytes than a map).
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

/// The Web Storage object of a kind, or the error text when the browser refuses it.
fn web_storage(kind: StorageKind) -> Result<Option<web_sys::Storage>, String> {
    let Some(w) = web_sys::window() else {
        return Ok(None);
    };
    let r = match kind {
        StorageKind::Local => w.local_storage(),
        StorageKind::Session => w.session_storage(),
        StorageKind::Memory => return Ok(None),
    };
    match r {
        Ok(Some(s)) => Ok(Some(s)),
        Ok(None) => Err("storage unavailable".into()),
        Err(e) => Err(error_text(&e)),
    }
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
    web: RefCell<Option<web_sys::Storage>>,
}

impl Store {
    /// Opens `wanted`, probing it with a set and remove of `probe_key`; each backend that
    /// throws adds a [`Fallback`] to `out` and the next one is tried.
    pub(crate) fn open(wanted: StorageKind, probe_key: &str, out: &mut Vec<Fallback>) -> Store {
        let mut kind = wanted;
        loop {
            if kind == StorageKind::Memory {
                return Store {
                    kind: Cell::new(kind),
                    web: RefCell::new(None),
                };
            }
            // A write and a read back: storage that takes writes but throws on reads (or
            // the reverse) would lose the record the next page looks for.
            let probed = web_storage(kind).and_then(|s| {
                let s = s.ok_or_else(|| String::from("no window"))?;
                s.set_item(probe_key, "1").map_err(|e| error_text(&e))?;
                let back = s.get_item(probe_key).map_err(|e| error_text(&e))?;
                let _ = s.remove_item(probe_key);
                match back.as_deref() {
                    Some("1") => Ok(s),
                    _ => Err("storage does not keep what it is given".into()),
                }
            });
            match probed {
                Ok(s) => {
                    return Store {
                        kind: Cell::new(kind),
                        web: RefCell::new(Some(s)),
                    }
                }
                Err(reason) => {
                    let to = next(kind);
                    out.push(Fallback {
                        from: kind.as_str(),
                        to: to.as_str(),
                        reason,
                    });
                    kind = to;
                }
            }
        }
    }

    /// The backend in use.
    pub(crate) fn kind(&self) -> StorageKind {
        self.kind.get()
    }

    /// Whether a `storage` event's area is this store's backend.
    pub(crate) fn is_area(&self, area: Option<web_sys::Storage>) -> bool {
        match (&*self.web.borrow(), area) {
            (Some(mine), Some(theirs)) => js_sys::Object::is(mine, &theirs),
            _ => false,
        }
    }

    /// Reads `key`; a backend that throws on read counts as empty.
    pub(crate) fn get(&self, key: &str) -> Option<String> {
        peek(self.kind.get(), key)
    }

    /// Writes `key`; when the backend throws, moves down the chain (dropping the stale copy
    /// where possible) and writes there. Returns the fallbacks taken.
    pub(crate) fn set(&self, key: &str, value: &str) -> Vec<Fallback> {
        let mut out = Vec::new();
        loop {
            let web = self.web.borrow().clone();
            let Some(s) = web else {
                mem_remove(key);
                MEMORY.with(|m| m.borrow_mut().push((key.into(), value.into())));
                return out;
            };
            let Err(e) = s.set_item(key, value) else {
                return out;
            };
            let _ = s.remove_item(key);
            let from = self.kind.get();
            let mut to = next(from);
            let mut reason = error_text(&e);
            let mut web = None;
            while to != StorageKind::Memory {
                match web_storage(to) {
                    Ok(Some(s)) => {
                        web = Some(s);
                        break;
                    }
                    Ok(None) => {}
                    Err(r) => reason = r,
                }
                to = next(to);
            }
            self.kind.set(to);
            *self.web.borrow_mut() = web;
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
            remove_in(kind, key);
        }
    }
}

/// Every backend, best first.
pub(crate) const ALL: [StorageKind; 3] = [
    StorageKind::Local,
    StorageKind::Session,
    StorageKind::Memory,
];

/// `key` in the backend `kind`; `None` when absent or when the backend throws.
pub(crate) fn peek(kind: StorageKind, key: &str) -> Option<String> {
    match web_storage(kind) {
        Ok(Some(s)) => s.get_item(key).ok().flatten(),
        Ok(None) if kind == StorageKind::Memory => MEMORY.with(|m| {
            m.borrow()
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        }),
        _ => None,
    }
}

/// Removes `key` from the backend `kind` (errors ignored).
pub(crate) fn remove_in(kind: StorageKind, key: &str) {
    match web_storage(kind) {
        Ok(Some(s)) => {
            let _ = s.remove_item(key);
        }
        Ok(None) if kind == StorageKind::Memory => mem_remove(key),
        _ => {}
    }
}

/// Removes `key` from the memory backend.
fn mem_remove(key: &str) {
    MEMORY.with(|m| m.borrow_mut().retain(|(k, _)| k != key));
}

/// Removes, from the given backends, the entries under `prefix` for which `drop(key, value)`
/// says so; returns how many went.
pub(crate) fn remove_where(
    kinds: &[StorageKind],
    prefix: &str,
    drop: impl Fn(&str, &str) -> bool,
) -> u32 {
    let mut n = 0;
    for &kind in kinds {
        match web_storage(kind) {
            Ok(Some(s)) => {
                // Keys first: removing while walking by index would skip entries.
                let doomed: Vec<String> = (0..s.length().unwrap_or(0))
                    .filter_map(|i| s.key(i).ok().flatten())
                    .filter(|k| {
                        k.starts_with(prefix)
                            && s.get_item(k).ok().flatten().is_some_and(|v| drop(k, &v))
                    })
                    .collect();
                for k in doomed {
                    n += s.remove_item(&k).is_ok() as u32;
                }
            }
            Ok(None) if kind == StorageKind::Memory => MEMORY.with(|m| {
                let mut m = m.borrow_mut();
                let before = m.len();
                m.retain(|(k, v)| !(k.starts_with(prefix) && drop(k, v)));
                n += (before - m.len()) as u32;
            }),
            _ => {}
        }
    }
    n
}
