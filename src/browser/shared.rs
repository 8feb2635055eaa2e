//! The scope's record as every tab shares it, read and written only by the tab holding the
//! scope's lock: IndexedDB holds it (`storage: "local"`), the Web Storage mirror follows
//! each write for `open()` and the getters, and a notice tells the other tabs at once.
//! Where IndexedDB is missing or fails (with a `storage-fallback` event), or for session
//! and memory storage, the Web Storage store itself holds the record.

use alloc::rc::Rc;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::checkout::Inner;
use super::clock::now_ms;
use super::events::Event;
use super::idb;
use super::lock::{self, Guard};
use super::storage;
use super::submit;
use super::task::{spawn_local, Maybe, Then};
use crate::core::record::{lease_key, proposal_key, Record};
use crate::core::state::{plan_submit, State, SubmitPlan};
use crate::core::sync::{may_replace, on_lock, Current, Notice};
use crate::prelude::*;
use wasm_bindgen::JsValue;

/// [`Locked::store_answer`]'s IndexedDB write and notice, spawned by a submit's future, and
/// the lock released once the write is done. Its first poll only asks for a second: that
/// lets the code that awaits the submit's promise run before the rest, for the first poll
/// comes in a microtask queued before the promise is resolved, and it queues the second
/// after the reactions to the resolution. Written out rather than an `async` block: fewer
/// bytes.
struct AnswerWrite {
    owner: Rc<Inner>,
    guard: Option<Guard>,
    rec: Record,
    text: String,
    /// Whether the first poll has been.
    turned: bool,
    /// The write, from the second poll on.
    write: Option<idb::Request>,
}

impl Future for AnswerWrite {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        if !this.turned {
            this.turned = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let owner = &this.owner;
        let write = match &mut this.write {
            Some(w) => w,
            none => {
                let w = idb::set(&owner.rec_key, Some(&this.text));
                owner.post(Notice::Stored(&this.text));
                none.insert(w)
            }
        };
        let Poll::Ready(done) = Pin::new(write).poll(cx) else {
            return Poll::Pending;
        };
        let Some(guard) = this.guard.take() else {
            return Poll::Ready(());
        };
        let held = Locked {
            inner: owner,
            _guard: guard,
        };
        if let Err(reason) = done {
            owner.idb_failed(&this.rec.key, &reason);
            held.mirror(&this.rec, &this.text);
        }
        Poll::Ready(())
    }
}

/// This tab's hold on the scope: released when dropped.
pub(crate) struct Locked<'a> {
    inner: &'a Inner,
    _guard: Guard,
}

impl Inner {
    /// Waits for the scope's lock (Web Locks, or the storage lease where there are none).
    /// The future is lock::acquire's own (not an `async fn` around it): fewer bytes.
    pub(crate) fn hold(&self) -> impl Future<Output = Locked<'_>> {
        let mut name = String::from("idemkey:");
        name.push_str(&self.rec_key);
        let lease = || lease_key(&self.opts.namespace, &self.opts.scope);
        lock::acquire(&self.store, name, lease, move |guard| Locked {
            inner: self,
            _guard: guard,
        })
    }

    /// A submit's stored answer read without the lock, when there is one to read: this tab
    /// shows a succeeded attempt of the payload `fp`, no `reset()` or `finish()` of this
    /// tab is waiting, and IndexedDB holds the scope's record. The answer is what the lock
    /// holder would go on from ([`on_lock`] on IndexedDB's record, which the browser reads
    /// after every committed write, and the mirror's) if that is still the attempt's
    /// success. Resolving with it changes nothing stored, so the lock, which orders changes,
    /// is not needed. Returned as `submit()` resolves with it (`fromCache`); `None` (also
    /// for anything unreadable) sends the submit the locked way.
    pub(crate) async fn stored_answer(&self, fp: &str) -> Option<JsValue> {
        let shown = {
            let r = self.rec.borrow();
            let shown_cached = r.state == State::Succeeded && r.fingerprint.as_deref() == Some(fp);
            if !shown_cached || !self.idb.get() || self.intents.get() > 0 {
                return None;
            }
            r.clone()
        };
        let stored = idb::get(&self.rec_key).await.ok()?;
        let decode = |text: Option<String>| match text {
            None => Some(None),
            Some(t) => {
                let r = self.decode(&t).ok()?;
                (r.scope == self.opts.scope).then_some(Some(r))
            }
        };
        // Where the lock holder looks too: the first Web Storage backend holding the record.
        // A copy of what IndexedDB holds is no news (same key, same `rev`): read once.
        let text = storage::ALL
            .into_iter()
            .find_map(|k| storage::peek(k, &self.rec_key, false))
            .filter(|t| Some(t) != stored.as_ref());
        let stored = decode(stored)?;
        let mirror = decode(text)?;
        let Current::Stored(r) = on_lock(stored, mirror, &shown, self.rec_stored.get(), now_ms())
        else {
            return None;
        };
        let cached =
            r.state == State::Succeeded && plan_submit(&r, fp, now_ms()) == SubmitPlan::Cached;
        if !cached {
            return None;
        }
        submit::cached(&r)
    }

    /// IndexedDB failed: the Web Storage store holds the record from now on. The event
    /// names `key`, the key of the record in hand (not always the one shown: a `reset()`
    /// may have shown a new key since).
    fn idb_failed(&self, key: &str, reason: &str) {
        self.idb.set(false);
        self.events.emit(
            key,
            Event::StorageFallback {
                from: "indexeddb",
                to: self.store.kind().as_str(),
                reason,
            },
        );
    }

    /// Reports, once, that IndexedDB's connection was lost and opened again for a request
    /// that then went through: nothing else changes.
    fn idb_reopened(&self) {
        if let Some(reason) = idb::take_reopened() {
            let key = self.rec.borrow().key.clone();
            self.events.emit(
                &key,
                Event::StorageReopened {
                    backend: "indexeddb",
                    reason: &reason,
                },
            );
        }
    }
}

impl Locked<'_> {
    /// The scope's record as the last lock holder stored it: what this tab goes on from.
    /// The future is IndexedDB's read (when it holds the record), the rest done by
    /// [`Locked::current_of`] once it is: fewer bytes than an `async fn`. The read is
    /// asked for when this is called, not when the future is first polled (every caller
    /// awaits it at once).
    pub(crate) fn current(&self) -> impl Future<Output = Current> + '_ {
        let i = self.inner;
        let get = i.idb.get().then(|| idb::get(&i.rec_key));
        Then::new(Maybe(get), |got| self.current_of(got))
    }

    /// [`Locked::current`] once IndexedDB has answered with `got` (`None`: not asked).
    fn current_of(&self, got: Option<Result<Option<String>, String>>) -> Current {
        let i = self.inner;
        let mut idb_text = None;
        match got {
            Some(Ok(t)) => {
                i.idb_reopened();
                idb_text = Some(t);
            }
            Some(Err(reason)) => {
                // Cloned first: the event's handler may call back into this checkout.
                let key = i.rec.borrow().key.clone();
                i.idb_failed(&key, &reason);
            }
            None => {}
        }
        // Always read: the mirror may hold a write IndexedDB refused.
        let web = i.read_mirror();
        // What the holder goes on from is decided here: a key proposed at `open()` (by any
        // page) is settled by it, or was made without seeing the record, and must not come
        // back after a reload. Removed before anything is stored, so that a page that goes
        // away in between leaves no proposal of a stored key behind.
        i.store
            .remove(&proposal_key(&i.opts.namespace, &i.opts.scope));
        let (stored, mirror) = match idb_text {
            Some(t) => (t.and_then(|t| i.decode_or_set_aside(&t)), web),
            None => (web, None),
        };
        // Borrowed, not cloned: on_lock is core's, it calls nothing back.
        on_lock(
            stored,
            mirror,
            &i.rec.borrow(),
            i.rec_stored.get(),
            now_ms(),
        )
    }

    /// [`Locked::current`] as a record, shown in this tab; and whether it still has to be
    /// stored (a key made here, a new attempt, a record only the mirror held).
    /// The future is [`Locked::current`]'s, its output taken by [`Locked::take`]: fewer
    /// bytes than an `async fn` around it.
    pub(crate) fn read(&self) -> impl Future<Output = (Record, bool)> + '_ {
        Then::new(self.current(), |cur| self.take(cur))
    }

    /// [`Locked::read`] once [`Locked::current`] has told `cur`.
    fn take(&self, cur: Current) -> (Record, bool) {
        let unstored = cur.unstored();
        let rec = match cur {
            Current::Stored(r) | Current::Legacy(r) => r,
            Current::Mine => self.inner.rec.borrow().clone(),
            Current::Fresh => self.inner.fresh(),
        };
        self.inner.show(&rec, !unstored);
        (rec, unstored)
    }

    /// Stores `rec` (its `rev` counted up) for every tab, and shows it here.
    /// The future is [`Locked::store_unposted`]'s, the notice posted once it is done.
    pub(crate) fn store<'a>(&'a self, rec: &'a mut Record) -> impl Future<Output = ()> + 'a {
        Then::new(self.store_unposted(rec), |text: String| {
            self.inner.post(Notice::Stored(&text))
        })
    }

    /// [`Locked::store`] but the notice to the other tabs: returns the text to post.
    /// The future is the IndexedDB write's, the mirror written once it is done.
    pub(crate) fn store_unposted<'a>(
        &'a self,
        rec: &'a mut Record,
    ) -> impl Future<Output = String> + 'a {
        rec.rev += 1;
        let text = rec.encode();
        let write = self.idb_write(Some(&text));
        Then::new(write, move |()| {
            self.mirror_as(rec, &text, false);
            text
        })
    }

    /// Stores a submit's final answer like [`Locked::store`], without waiting for
    /// IndexedDB to commit it: the mirror is written at once, so the submit can resolve,
    /// and the lock is released once IndexedDB has the answer, so the next lock holder
    /// reads it there. For a mirror in localStorage: a page that goes away first leaves
    /// the mirror's copy ahead of the store's, and the next lock holder goes on from the
    /// mirror's (core::sync's `store_missed`), so either way the answer is kept.
    /// The IndexedDB write and the notice wait a microtask turn ([`AnswerWrite`]): the code
    /// that awaits `submit()` runs first (the answer is in the mirror, and shown, by then);
    /// the next lock holder's IndexedDB requests still come after the write, which holds
    /// the lock, and a read without the lock that comes first finds the mirror ahead and
    /// takes the lock ([`Inner::stored_answer`]).
    pub(crate) fn store_answer(self, owner: Rc<Inner>, mut rec: Record) {
        let i = self.inner;
        rec.rev += 1;
        let text = rec.encode();
        let shared = i.idb.get();
        // Without IndexedDB the mirror is the store: the lock goes when `self` does.
        self.mirror_as(&rec, &text, !shared);
        if !shared {
            return;
        }
        let Locked { _guard, .. } = self;
        spawn_local(AnswerWrite {
            owner,
            guard: Some(_guard),
            rec,
            text,
            turned: false,
            write: None,
        });
    }

    /// Writes `text`, the encoded `rec`, to the Web Storage mirror (the record's store when
    /// IndexedDB has failed), tells the other tabs and shows it here.
    fn mirror(&self, rec: &Record, text: &str) {
        self.mirror_as(rec, text, true);
    }

    /// [`Locked::mirror`], the other tabs told only with `post`.
    fn mirror_as(&self, rec: &Record, text: &str, post: bool) {
        let i = self.inner;
        // Text in the way that cannot be read (edited by hand, another version) is set
        // aside with its event, not overwritten unseen.
        i.read_in(i.store.kind());
        let zero;
        let web = if i.idb.get() {
            text
        } else {
            // `rev` 0: IndexedDB does not hold this copy (see core::sync::store_missed).
            let mut r = rec.clone();
            r.rev = 0;
            zero = r.encode();
            &zero
        };
        let fb = i.store.set(&i.rec_key, web);
        let key = i.rec.borrow().key.clone();
        i.report(&key, fb);
        if post {
            i.post(Notice::Stored(text));
        }
        i.show(rec, true);
    }

    /// Removes the scope's record, whose key is `key`, for every tab and from every
    /// backend. The future is [`Locked::idb_write`]'s, the rest done once it is: fewer
    /// bytes than an `async fn`. The delete is asked for when this is called, not when the
    /// future is first polled (the caller awaits it at once).
    pub(crate) fn remove<'a>(&'a self, key: &'a str) -> impl Future<Output = ()> + 'a {
        Then::new(self.idb_write(None), move |()| {
            self.inner.store.remove(&self.inner.rec_key);
            self.inner.post(Notice::Removed(key));
        })
    }

    /// Writes IndexedDB first (`None` deletes), when it holds the scope's record: the
    /// Web Storage copy follows, so another tab's copy is never newer than what it holds
    /// unless this write failed. The write is queued at the call; the future is its own,
    /// not an `async fn`'s: fewer bytes.
    fn idb_write(&self, text: Option<&str>) -> impl Future<Output = ()> + '_ {
        let i = self.inner;
        let write = i.idb.get().then(|| idb::set(&i.rec_key, text));
        Then::new(Maybe(write), move |done: Option<idb::Done>| match done {
            Some(Err(reason)) => {
                let key = i.rec.borrow().key.clone();
                i.idb_failed(&key, &reason);
            }
            Some(Ok(_)) => i.idb_reopened(),
            None => {}
        })
    }
}

/// `reset()` (`keep`: store `next`) or `finish()` (remove the record) made while `inner`
/// showed `seen`: once it holds the lock, applied only if the stored record is still that
/// attempt (or none); otherwise the other tab's newer attempt stays. Then the intent is
/// counted off and what the tab shows afterwards is shown. One `async fn` for the whole
/// run, lock included (none nested in it): fewer bytes.
pub(crate) async fn start_over(inner: Rc<Inner>, seen: String, mut next: Record, keep: bool) {
    let held = inner.hold().await;
    let stored = match held.current().await {
        Current::Stored(r) | Current::Legacy(r) => Some(r),
        Current::Mine | Current::Fresh => None,
    };
    let shown = if !may_replace(stored.as_ref(), &seen, now_ms()) {
        (stored.unwrap_or(next), true)
    } else if keep {
        held.store(&mut next).await;
        (next, true)
    } else {
        if let Some(old) = stored {
            held.remove(&old.key).await;
        }
        (next, false)
    };
    // Released before the intent is counted off and the record shown.
    drop(held);
    inner.intents.set(inner.intents.get() - 1);
    inner.show(&shown.0, shown.1);
}
