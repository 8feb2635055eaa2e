//! The cross-tab lock around one scope's work: the Web Locks API, the one way the tabs of
//! an origin take turns (the browser releases a tab's lock when the tab dies). Where the
//! record belongs to this tab alone (no Web Locks, `storage: "session"` or `"memory"`),
//! no other tab can touch it and the scope's own job queue is all the turn-taking needed:
//! the lock is the tab's, granted on the next turn.

use super::host::Host;
use super::io::{Command, Wake};
use super::mirror::{Fallback, Store};
use super::state::{At, Lock, Scope, Stage, Step};
use crate::core::options::StorageKind;
use crate::prelude::*;

impl<H: Host> Scope<H> {
    /// Asks for the lock: the submit waits for it ([`Step::Locked`] follows once held).
    pub(super) fn take_lock(&mut self) -> Option<At> {
        self.lock = Lock::Asking;
        if self.shared_with_tabs() {
            let mut name = String::from("idemkey:");
            name.push_str(&self.rec_key);
            self.out.push(Command::Lock { name });
        } else {
            self.out.push(Command::Wake {
                ms: 0.0,
                wake: Wake::OwnLock,
            });
        }
        Some(At::Locking(Stage::Lock))
    }

    /// The lock asked for is held (the Web Lock, or the tab's own).
    pub(super) fn lock_granted(&mut self, web: bool) {
        if self.lock == Lock::Asking {
            self.lock = if web { Lock::Web } else { Lock::Own };
            self.resume(Step::Locked);
        }
    }

    /// The Web Lock request failed (the browser refused it): the record becomes this tab's
    /// alone, as where the page has no Web Locks, with a `storage-fallback` event.
    pub(super) fn lock_refused(&mut self, reason: String) {
        if self.lock == Lock::Asking {
            self.idb = false;
            self.listening = false;
            let from = self.store.kind();
            let mut fallbacks = vec![Fallback {
                from,
                to: StorageKind::Session,
                reason,
            }];
            if from == StorageKind::Local {
                self.store = Store::open(
                    &mut self.host,
                    StorageKind::Session,
                    &self.rec_key.clone(),
                    &mut fallbacks,
                );
            }
            let key = self.rec.key.clone();
            self.report(&key, fallbacks);
            self.lock_granted(false);
        }
    }

    /// Releases the lock held.
    pub(super) fn release_lock(&mut self) {
        if core::mem::replace(&mut self.lock, Lock::Free) == Lock::Web {
            self.out.push(Command::Unlock);
        }
    }
}
