//! The cross-tab lock around one scope's work: the Web Locks API where the page has it, a
//! storage lease (core::lease) where not. The browser releases a Web Lock when its tab
//! dies; a lease is renewed on a timer while held and lapses on its own once its tab is
//! gone, so it never blocks the scope for good.

use super::host::{new_key, random01, Host};
use super::io::{Command, Wake};
use super::state::{Lock, Scope, Step};
use crate::core::lease::{can_acquire, Lease, LEASE_POLL_MS, LEASE_RENEW_MS};
use crate::core::record::lease_key;
use crate::prelude::*;

/// How long a tab that wrote the lease waits before it looks who won: a racing tab's
/// write lands meanwhile.
const LEASE_SETTLE_MS: f64 = 25.0;

impl<H: Host> Scope<H> {
    /// Asks for the lock; [`Step::Locked`] follows once held.
    pub(super) fn take_lock(&mut self) {
        if self.host.web_locks() {
            self.lock = Lock::Asking;
            let mut name = String::from("idemkey:");
            name.push_str(&self.rec_key);
            self.out.push_back(Command::Lock { name });
        } else {
            self.lease_start();
        }
    }

    /// The Web Lock is held.
    pub(super) fn lock_granted(&mut self) {
        if self.lock == Lock::Asking {
            self.lock = Lock::Web;
            self.resume(Step::Locked);
        }
    }

    /// Waits for the lease instead (no Web Locks, or the request failed).
    pub(super) fn lease_start(&mut self) {
        let owner = new_key(&mut self.host);
        self.lock = Lock::Leasing {
            owner,
            wrote: false,
        };
        self.lease_poll();
    }

    /// Writes a lease for this page unless another tab holds a live one (overwriting it
    /// would let both believe they hold the scope); whether it wrote.
    fn lease_write(&mut self, owner: &str) -> bool {
        let at = lease_key(&self.opts.namespace, &self.opts.scope);
        let now = self.host.now_ms();
        let current = self.store.get(&mut self.host, &at);
        let free = can_acquire(current.and_then(|t| Lease::decode(&t)).as_ref(), owner, now);
        if free {
            let text = Lease::new(owner, now).encode();
            let _ = self.store.set(&mut self.host, &at, &text);
        }
        free
    }

    /// Whether the stored lease is `owner`'s.
    fn lease_mine(&mut self, owner: &str) -> bool {
        let at = lease_key(&self.opts.namespace, &self.opts.scope);
        let current = self.store.get(&mut self.host, &at);
        current
            .and_then(|t| Lease::decode(&t))
            .is_some_and(|l| l.owner == owner)
    }

    /// A wake while waiting for the lease: a written lease that is still ours is held;
    /// otherwise write it if free and look again after [`LEASE_SETTLE_MS`], or poll later.
    pub(super) fn lease_poll(&mut self) {
        let Lock::Leasing { owner, wrote } = core::mem::replace(&mut self.lock, Lock::Free) else {
            return;
        };
        if wrote && self.lease_mine(&owner) {
            let renewal = self.renewals;
            self.lock = Lock::Lease { owner, renewal };
            self.renew_later(renewal);
            self.resume(Step::Locked);
            return;
        }
        let wrote = !wrote && self.lease_write(&owner);
        let ms = if wrote {
            LEASE_SETTLE_MS
        } else {
            LEASE_POLL_MS as f64 * (0.5 + random01(&mut self.host))
        };
        self.lock = Lock::Leasing { owner, wrote };
        self.out.push_back(Command::Wake {
            ms,
            wake: Wake::LeasePoll,
        });
    }

    fn renew_later(&mut self, renewal: u32) {
        self.out.push_back(Command::Wake {
            ms: LEASE_RENEW_MS as f64,
            wake: Wake::LeaseRenew(renewal),
        });
    }

    /// A renewal wake: the held lease is written again for a full term.
    pub(super) fn lease_renew(&mut self, n: u32) {
        if let Lock::Lease { owner, renewal } = &self.lock {
            if *renewal == n {
                let owner = owner.clone();
                self.lease_write(&owner);
                self.renew_later(n);
            }
        }
    }

    /// Releases the lock held: the Web Lock, or the lease if it is still ours (its renewal
    /// stops: the next lease is numbered anew).
    pub(super) fn release_lock(&mut self) {
        match core::mem::replace(&mut self.lock, Lock::Free) {
            Lock::Web => self.out.push_back(Command::Unlock),
            Lock::Lease { owner, .. } => {
                if self.lease_mine(&owner) {
                    let at = lease_key(&self.opts.namespace, &self.opts.scope);
                    self.host.storage_remove(self.store.kind(), &at);
                }
                self.renewals += 1;
            }
            _ => {}
        }
    }
}
