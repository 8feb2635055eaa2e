//! The cross-tab lock around one scope's request sequence: the Web Locks API
//! (`navigator.locks.request`) where present, a polled storage lease (core::lease) where not.

use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::clock::{now_ms, random01, sleep};
use super::storage::Store;
use crate::core::lease;

// web-sys gates LockManager behind an unstable cfg; this is all we need of it.
// Resolves with the lock's release function once held; null when there is no Web Locks.
#[wasm_bindgen(
    inline_js = "export function lockAcquire(n){const l=globalThis.navigator&&navigator.locks;\
if(!l||typeof l.request!='function')return null;\
return new Promise(ok=>{l.request(n,()=>new Promise(ok)).catch(()=>ok(null))})}"
)]
extern "C" {
    #[wasm_bindgen(js_name = lockAcquire)]
    fn lock_acquire(name: &str) -> JsValue;
}

/// A held lock; dropping it releases it.
pub(crate) enum Guard {
    /// A Web Lock: call to release.
    Web(Function),
    /// A storage lease we own.
    Lease {
        /// Where the lease lives.
        store: Rc<Store>,
        /// The lease's storage key.
        key: String,
        /// Our owner id.
        owner: String,
    },
}

impl Guard {
    /// Extends a storage lease before a long step; a Web Lock needs nothing.
    pub(crate) fn renew(&self) {
        if let Guard::Lease { store, key, owner } = self {
            let _ = store.set(key, &lease::Lease::new(owner, now_ms()).encode());
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        match self {
            Guard::Web(release) => {
                let _ = release.call0(&JsValue::UNDEFINED);
            }
            Guard::Lease { store, key, owner } => {
                let mine = store.get(key).and_then(|s| lease::Lease::decode(&s));
                if mine.is_some_and(|l| l.owner == *owner) {
                    store.remove(key);
                }
            }
        }
    }
}

/// Waits for the lock named `lock_name` (Web Locks) or the lease at `lease_key` (fallback).
pub(crate) async fn acquire(store: &Rc<Store>, lock_name: &str, lease_key: &str) -> Guard {
    let p = lock_acquire(lock_name);
    if let Some(p) = p.dyn_ref::<Promise>() {
        if let Ok(f) = JsFuture::from(p.clone()).await {
            if let Ok(f) = f.dyn_into::<Function>() {
                return Guard::Web(f);
            }
        }
    }
    lease_acquire(store, lease_key).await
}

async fn lease_acquire(store: &Rc<Store>, key: &str) -> Guard {
    let owner = uuid::Uuid::new_v4().to_string();
    loop {
        let cur = store.get(key).and_then(|s| lease::Lease::decode(&s));
        if lease::can_acquire(cur.as_ref(), &owner, now_ms()) {
            let _ = store.set(key, &lease::Lease::new(&owner, now_ms()).encode());
            // Let a racing tab's write land, then see who won.
            sleep(25.0).await;
            let won = store.get(key).and_then(|s| lease::Lease::decode(&s));
            if won.is_some_and(|l| l.owner == *owner) {
                return Guard::Lease {
                    store: store.clone(),
                    key: key.into(),
                    owner,
                };
            }
        }
        sleep(lease::LEASE_POLL_MS as f64 * (0.5 + random01())).await;
    }
}
