//! The cross-tab lock around one scope's request sequence: the Web Locks API
//! (`navigator.locks.request`) where present, a polled storage lease (core::lease) where not.
//! The browser releases a Web Lock when its tab dies; a lease is renewed on a timer while
//! held and lapses on its own once its tab is gone.

use crate::prelude::*;
use alloc::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use super::clock::{clear_interval, now_ms, random01, set_interval, sleep};
use super::storage::Store;
use super::task::JsFuture;
use crate::core::lease;

// web-sys gates LockManager behind an unstable cfg; this is all we need of it.
// Resolves with the lock's release function once held; null when there is no Web Locks.
#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = lockAcquire)]
    fn lock_acquire(name: &str) -> JsValue;
    /// Whether the page has the Web Locks API.
    #[wasm_bindgen(js_name = webLocks)]
    pub(crate) fn web_locks() -> bool;
}

/// A storage lease this tab holds (or is trying to take): where it lives and whose it is.
pub(crate) struct Held {
    store: Rc<Store>,
    key: String,
    owner: String,
}

impl Held {
    /// The stored lease, if readable.
    fn current(&self) -> Option<lease::Lease> {
        self.store
            .get(&self.key)
            .and_then(|s| lease::Lease::decode(&s))
    }

    /// Whether the stored lease is this tab's.
    fn mine(&self) -> bool {
        self.current().is_some_and(|l| l.owner == self.owner)
    }

    /// Writes a lease for `LEASE_MS` from now, unless another tab holds a live one
    /// (overwriting it would let both tabs believe they hold the scope); whether it wrote.
    fn renew(&self) -> bool {
        let now = now_ms();
        let free = lease::can_acquire(self.current().as_ref(), &self.owner, now);
        if free {
            let _ = self
                .store
                .set(&self.key, &lease::Lease::new(&self.owner, now).encode());
        }
        free
    }
}

/// A held lock; dropping it releases it.
pub(crate) enum Guard {
    /// A Web Lock: call to release.
    Web(Function),
    /// A storage lease we own, renewed by an interval timer until the guard drops.
    Lease {
        /// The lease.
        held: Rc<Held>,
        /// The `setInterval` id of the renewal.
        timer: JsValue,
        /// The renewal callback, alive as long as the timer.
        _tick: Closure<dyn FnMut()>,
    },
}

impl Drop for Guard {
    fn drop(&mut self) {
        match self {
            Guard::Web(release) => {
                let _ = release.call0(&JsValue::UNDEFINED);
            }
            Guard::Lease { held, timer, .. } => {
                clear_interval(timer);
                if held.mine() {
                    held.store.remove(&held.key);
                }
            }
        }
    }
}

/// Waits for the lock named `lock_name` (Web Locks) or the lease at `lease_key()`
/// (fallback, the key made only then); resolves with the held lock as `wrap` makes it.
pub(crate) async fn acquire<T>(
    store: &Rc<Store>,
    lock_name: String,
    lease_key: impl FnOnce() -> String,
    wrap: impl FnOnce(Guard) -> T,
) -> T {
    let p = lock_acquire(&lock_name);
    // glue.js gives a promise or null: no `instanceof` check (an import) needed.
    if !p.is_null() {
        // It resolves with the release function, or null when the request failed: no
        // `typeof` check (an import) needed either.
        if let Ok(f) = JsFuture::from(p.unchecked_into::<Promise>()).await {
            if !f.is_null() {
                return wrap(Guard::Web(f.unchecked_into()));
            }
        }
    }
    // The lease loop in this future rather than in one nested in it: fewer bytes.
    let held = Held {
        store: store.clone(),
        key: lease_key(),
        owner: super::checkout::new_key(),
    };
    loop {
        if held.renew() {
            // Let a racing tab's write land, then see who won.
            let _ = sleep(25.0).await;
            if held.mine() {
                return wrap(hold(held));
            }
        }
        let _ = sleep(lease::LEASE_POLL_MS as f64 * (0.5 + random01())).await;
    }
}

/// Starts renewing a won lease every `LEASE_RENEW_MS` until the guard drops.
fn hold(held: Held) -> Guard {
    let held = Rc::new(held);
    let h = held.clone();
    let tick = Closure::<dyn FnMut()>::new(move || {
        h.renew();
    });
    let timer = set_interval(tick.as_ref().unchecked_ref(), lease::LEASE_RENEW_MS as f64);
    Guard::Lease {
        held,
        timer,
        _tick: tick,
    }
}
