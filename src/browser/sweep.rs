//! Sweeping a namespace's expired records, proposals and old quarantined copies from
//! Web Storage and IndexedDB: at the first `open()` of a namespace in the page, and on
//! `sweep()`.

use crate::prelude::*;

use super::clock::now_ms;
use super::idb;
use super::page::PageCell;
use super::record;
use super::storage;
use super::task::spawn_local;
use crate::core::options::StorageKind;
use crate::core::record::sweep_due;

/// The backends this page has swept, each as `{namespace}:{backend}` (`local`, `session`,
/// `memory` or `indexeddb`): once per page load is enough for records that live for hours,
/// a Web Storage sweep reads every key of the backend, the page's own among them, and an
/// IndexedDB one is a scan of the store that delays the submit after it.
static SWEPT: PageCell<Vec<String>> = PageCell::new(Vec::new());

/// Deletes from the given backends what core's `sweep_due` says: the expired records of
/// `namespace` and its quarantined copies past their retention; returns how many (the
/// IndexedDB ones, deleted in the background where `idb` says so, are not counted).
/// With `once`, each backend is skipped if this page has swept it for `namespace` before;
/// without, all are swept, and the IndexedDB sweep counts as this page's.
pub(crate) fn sweep_kinds(kinds: &[StorageKind], namespace: &str, idb: bool, once: bool) -> u32 {
    let mut prefix = String::from(namespace);
    prefix.push(':');
    let now = now_ms();
    let due = |backend: &str| {
        let mut done = prefix.clone();
        done.push_str(backend);
        SWEPT.first_time(done) || !once
    };
    if idb && due("indexeddb") {
        let (ns, p) = (String::from(namespace), prefix.clone());
        spawn_local(async move {
            idb::sweep(&p, move |k, v| sweep_due(&ns, &k, &v, now, record::decode)).await;
        });
    }
    let mut n = 0;
    for &kind in kinds {
        // Without `once` the Web Storage sweep is not recorded: `open()` still sweeps.
        if !once || due(kind.as_str()) {
            n += storage::remove_where(kind, &prefix, |k, v| {
                sweep_due(namespace, k, v, now, record::decode)
            });
        }
    }
    n
}
