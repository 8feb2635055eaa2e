//! The cross-tab lock around one scope's work: the Web Locks API where the page has it, a
//! storage lease (core::lease) where not. The browser releases a Web Lock when its tab
//! dies; a lease is renewed on a timer while held and lapses on its own once its tab is
//! gone, so it never blocks the scope for good.
//!
//! The lease lives in IndexedDB where IndexedDB holds the record: each take, renewal and
//! release reads the lease and writes it in that read's readwrite transaction, and the
//! browser runs an origin's readwrite transactions on a store one at a time, so two tabs
//! never both take it, however late localStorage reaches the other tab. Where the record
//! fell back to Web Storage, so does the lease (written, then looked at again after
//! [`LEASE_SETTLE_MS`]: a guess at how late another tab's write lands, which is all Web
//! Storage offers).

use super::host::{new_key, random01, Host};
use super::io::{Command, Wake};
use super::state::{LeaseOp, Lock, Scope, Step};
use crate::core::lease::{can_acquire, is_ours, Lease, LEASE_POLL_MS, LEASE_RENEW_MS};
use crate::core::record::lease_key;
use crate::prelude::*;

/// How long a tab that wrote the Web Storage lease waits before it looks who won: a racing
/// tab's write lands meanwhile, if localStorage reaches it in time.
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

    /// A wake while waiting for the lease: IndexedDB's lease is read (and taken in the same
    /// transaction if free); the Web Storage lease is checked or written.
    pub(super) fn lease_poll(&mut self) {
        let Lock::Leasing { owner, .. } = &self.lock else {
            return;
        };
        if self.idb {
            let op = LeaseOp::Take(owner.clone());
            self.lease_op(op);
        } else {
            self.web_lease_poll();
        }
    }

    /// Asks for a read of IndexedDB's lease for `op`, after the ones asked before.
    fn lease_op(&mut self, op: LeaseOp) {
        self.lease_ops.push_back(op);
        if self.lease_ops.len() == 1 {
            self.lease_get();
        }
    }

    fn lease_get(&mut self) {
        let key = lease_key(&self.opts.namespace, &self.opts.scope);
        self.out.push_back(Command::LeaseGet { key });
    }

    /// IndexedDB read the lease for the first op asked: a take writes ours if
    /// [`can_acquire`] says so, a renewal or release rewrites or deletes it only if it is
    /// still ours ([`is_ours`]); each in the read's transaction. A failed read moves the
    /// record and the lease to Web Storage, as a failed read of the record does.
    pub(super) fn lease_read(&mut self, got: Result<Option<String>, String>) {
        let Some(op) = self.lease_ops.pop_front() else {
            return;
        };
        let current = match got {
            Ok(text) => text.and_then(|t| Lease::decode(&t)),
            Err(reason) => {
                if self.idb {
                    let key = self.rec.key.clone();
                    self.idb_failed(&key, reason);
                }
                return self.lease_done(op, false);
            }
        };
        let now = self.host.now_ms();
        let text = match &op {
            LeaseOp::Take(me) if self.leasing(me) && can_acquire(current.as_ref(), me, now) => {
                Some(Lease::new(me, now).encode())
            }
            LeaseOp::Renew(me) if self.leased(me) && is_ours(current.as_ref(), me) => {
                Some(Lease::new(me, now).encode())
            }
            LeaseOp::Release(me) if is_ours(current.as_ref(), me) => None,
            _ => return self.lease_done(op, false),
        };
        self.lease_ops.push_front(op);
        let key = lease_key(&self.opts.namespace, &self.opts.scope);
        self.out.push_back(Command::LeasePut { key, text });
    }

    /// IndexedDB committed (or did not) the first op's write.
    pub(super) fn lease_written(&mut self, done: Result<(), String>) {
        if let Some(op) = self.lease_ops.pop_front() {
            self.lease_done(op, done.is_ok());
        }
    }

    /// The first op, taken off the list, is over (`wrote`: its write committed): the next
    /// op's read is asked first (an op asked from here on, the list empty, asks itself);
    /// then a take that wrote holds the lease, one that did not polls again.
    fn lease_done(&mut self, op: LeaseOp, wrote: bool) {
        if !self.lease_ops.is_empty() {
            self.lease_get();
        }
        if let LeaseOp::Take(me) = op {
            if wrote && self.leasing(&me) {
                self.lease_held(me, true);
            } else if self.leasing(&me) {
                self.poll_later();
            }
        }
    }

    /// Whether this page waits for the lease as `me`.
    fn leasing(&self, me: &str) -> bool {
        matches!(&self.lock, Lock::Leasing { owner, .. } if owner == me)
    }

    /// Whether this page holds the lease as `me`.
    fn leased(&self, me: &str) -> bool {
        matches!(&self.lock, Lock::Lease { owner, .. } if owner == me)
    }

    /// The lease is held: renewed on a timer until released.
    fn lease_held(&mut self, owner: String, idb: bool) {
        let renewal = self.renewals;
        self.lock = Lock::Lease {
            owner,
            renewal,
            idb,
        };
        self.renew_later(renewal);
        self.resume(Step::Locked);
    }

    /// Looks at the lease again after about [`LEASE_POLL_MS`] (jittered: two waiting tabs
    /// do not keep meeting).
    fn poll_later(&mut self) {
        let ms = LEASE_POLL_MS as f64 * (0.5 + random01(&mut self.host));
        self.out.push_back(Command::Wake {
            ms,
            wake: Wake::LeasePoll,
        });
    }

    /// Writes a Web Storage lease for this page unless another tab holds a live one
    /// (overwriting it would let both believe they hold the scope); whether it wrote.
    fn web_lease_write(&mut self, owner: &str) -> bool {
        let at = lease_key(&self.opts.namespace, &self.opts.scope);
        let now = self.host.now_ms();
        let current = self.store.get(&mut self.host, &at);
        let free = can_acquire(current.and_then(|t| Lease::decode(&t)).as_ref(), owner, now);
        if free {
            let text = Lease::new(owner, now).encode();
            let _ = self.store.set(&mut self.host, &at, &text, false);
        }
        free
    }

    /// Whether the Web Storage lease is `owner`'s.
    fn web_lease_mine(&mut self, owner: &str) -> bool {
        let at = lease_key(&self.opts.namespace, &self.opts.scope);
        let current = self.store.get(&mut self.host, &at);
        is_ours(current.and_then(|t| Lease::decode(&t)).as_ref(), owner)
    }

    /// The Web Storage lease: a written lease that is still ours is held; otherwise write
    /// it if free and look again after [`LEASE_SETTLE_MS`], or poll later.
    fn web_lease_poll(&mut self) {
        let Lock::Leasing { owner, wrote } = core::mem::replace(&mut self.lock, Lock::Free) else {
            return;
        };
        if wrote && self.web_lease_mine(&owner) {
            return self.lease_held(owner, false);
        }
        let wrote = !wrote && self.web_lease_write(&owner);
        self.lock = Lock::Leasing { owner, wrote };
        if wrote {
            self.out.push_back(Command::Wake {
                ms: LEASE_SETTLE_MS,
                wake: Wake::LeasePoll,
            });
        } else {
            self.poll_later();
        }
    }

    fn renew_later(&mut self, renewal: u32) {
        self.out.push_back(Command::Wake {
            ms: LEASE_RENEW_MS as f64,
            wake: Wake::LeaseRenew(renewal),
        });
    }

    /// A renewal wake: the held lease is written again for a full term (in IndexedDB only
    /// while still ours, and not while a renewal is still under way).
    pub(super) fn lease_renew(&mut self, n: u32) {
        let Lock::Lease {
            owner,
            renewal,
            idb,
        } = &self.lock
        else {
            return;
        };
        if *renewal != n {
            return;
        }
        let (owner, idb) = (owner.clone(), *idb);
        if !idb {
            self.web_lease_write(&owner);
        } else if !self
            .lease_ops
            .iter()
            .any(|op| matches!(op, LeaseOp::Renew(_)))
        {
            self.lease_op(LeaseOp::Renew(owner));
        }
        self.renew_later(n);
    }

    /// Releases the lock held: the Web Lock, or the lease if it is still ours (its renewal
    /// stops: the next lease is numbered anew).
    pub(super) fn release_lock(&mut self) {
        match core::mem::replace(&mut self.lock, Lock::Free) {
            Lock::Web => self.out.push_back(Command::Unlock),
            Lock::Lease { owner, idb, .. } => {
                if idb {
                    self.lease_op(LeaseOp::Release(owner));
                } else if self.web_lease_mine(&owner) {
                    let at = lease_key(&self.opts.namespace, &self.opts.scope);
                    self.host.storage_remove(self.store.kind(), &at);
                }
                self.renewals += 1;
            }
            _ => {}
        }
    }
}
