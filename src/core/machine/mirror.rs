//! A scope's Web Storage copy of its record (the record's store itself where IndexedDB is
//! not used), with the fallback chain local -> session -> memory whenever a backend throws
//! (SecurityError when storage is disabled, QuotaExceededError, Safari private mode).

use super::host::Host;
use crate::core::options::StorageKind;
use crate::prelude::*;

/// Every backend, best first.
pub const ALL: [StorageKind; 3] = [
    StorageKind::Local,
    StorageKind::Session,
    StorageKind::Memory,
];

/// A backend change: reported as a `storage-fallback` event.
#[derive(Debug, Clone, PartialEq)]
pub struct Fallback {
    /// The backend that threw.
    pub from: StorageKind,
    /// The backend now in use.
    pub to: StorageKind,
    /// The browser's error text.
    pub reason: String,
}

fn next(kind: StorageKind) -> StorageKind {
    match kind {
        StorageKind::Local => StorageKind::Session,
        _ => StorageKind::Memory,
    }
}

/// The backend a scope writes, which only ever moves down the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Store {
    kind: StorageKind,
}

impl Store {
    /// Opens `wanted`, checked with a read of `key`: a backend the page lacks, or one
    /// that throws on reads (it would lose the record the next page looks for), adds a
    /// [`Fallback`] to `out`, and the next is tried. Whether it takes writes is learnt
    /// from the first write ([`Store::set`] moves down then) or from [`Store::probe`].
    pub fn open(
        host: &mut impl Host,
        wanted: StorageKind,
        key: &str,
        out: &mut Vec<Fallback>,
    ) -> Store {
        let mut store = Store { kind: wanted };
        store.walk(host, key, false, out);
        store
    }

    /// Probes the backend in use with a set, get and remove of `probe_key`, moving down
    /// past each that throws: storage that reads but takes no writes (a full quota, some
    /// private modes), found before any write of the record's would find it.
    pub fn probe(&mut self, host: &mut impl Host, probe_key: &str, out: &mut Vec<Fallback>) {
        self.walk(host, probe_key, true, out);
    }

    /// Moves down the chain from the backend in use until one the page has reads `key`
    /// (and, with `write`, first takes it), each one passed over a [`Fallback`] in `out`.
    fn walk(&mut self, host: &mut impl Host, key: &str, write: bool, out: &mut Vec<Fallback>) {
        while self.kind != StorageKind::Memory {
            let kind = self.kind;
            let reason = match host.storage_usable(kind) {
                Ok(true) => {
                    let wrote = if write {
                        host.storage_set(kind, key, "1")
                    } else {
                        Ok(())
                    };
                    match wrote.and_then(|()| host.storage_get(kind, key)) {
                        Ok(_) => {
                            if write {
                                host.storage_remove(kind, key);
                            }
                            return;
                        }
                        Err(e) => e,
                    }
                }
                Ok(false) => "no window".into(),
                Err(reason) => reason,
            };
            let to = next(kind);
            out.push(Fallback {
                from: kind,
                to,
                reason,
            });
            self.kind = to;
        }
    }

    /// The backend in use.
    pub fn kind(&self) -> StorageKind {
        self.kind
    }

    /// Reads `key`; a backend that throws on read counts as empty.
    pub fn get(&self, host: &mut impl Host, key: &str) -> Option<String> {
        host.storage_get(self.kind, key).ok().flatten()
    }

    /// Writes `key`; when the backend throws, moves down the chain (past backends the
    /// page does not have) and writes there. The copy the refused write was to replace is
    /// dropped there, unless `keep_stale` (the caller's judgement of that copy). Returns the
    /// fallbacks taken.
    pub fn set(
        &mut self,
        host: &mut impl Host,
        key: &str,
        value: &str,
        keep_stale: bool,
    ) -> Vec<Fallback> {
        let mut out = Vec::new();
        loop {
            let from = self.kind;
            let mut reason = match host.storage_set(from, key, value) {
                Ok(()) => return out,
                Err(e) => {
                    if !keep_stale {
                        host.storage_remove(from, key);
                    }
                    e
                }
            };
            let mut to = next(from);
            while to != StorageKind::Memory {
                match host.storage_usable(to) {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(r) => reason = r,
                }
                to = next(to);
            }
            self.kind = to;
            out.push(Fallback { from, to, reason });
        }
    }

    /// Removes `key` from every backend, where a fallback may have left a copy.
    pub fn remove(host: &mut impl Host, key: &str) {
        for kind in ALL {
            host.storage_remove(kind, key);
        }
    }
}
