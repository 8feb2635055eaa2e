//! How a scope's live state in this page hears what other tabs store: the scope's
//! BroadcastChannel notices and, where that is missing, the `storage` event; each shows
//! another tab's newer record here (core::sync decides what is newer).

use crate::prelude::*;
use alloc::rc::{Rc, Weak};

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::broadcast::Channel;
use super::checkout::Inner;
use super::js::text;
use crate::core::sync::{removes, supersedes, Notice};

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// Adds (`add`) or removes the window's `storage` event listener that calls `f` with
    /// the event's `[key, newValue, oldValue, storageArea]`; nothing without a window.
    #[wasm_bindgen(js_name = onStorageEvent)]
    fn on_storage_event(f: &JsValue, add: bool);
}

/// The `storage` event listener, kept to remove it when the scope's state is dropped.
pub(crate) type Listener = Closure<dyn FnMut(JsValue)>;

impl Inner {
    /// Joins the scope's channel and listens for `storage` events (only where the record
    /// is shared: session and memory records belong to this tab or page).
    pub(crate) fn listen(self: &Rc<Inner>) {
        if !self.idb.get() {
            return;
        }
        let weak: Weak<Inner> = Rc::downgrade(self);
        self.channel
            .replace(Channel::open(&self.rec_key, move |text: String| {
                if let Some(inner) = weak.upgrade() {
                    inner.on_notice(&text);
                }
            }));
        let weak: Weak<Inner> = Rc::downgrade(self);
        let cb: Listener = Closure::new(move |ev: JsValue| {
            if let Some(inner) = weak.upgrade() {
                inner.on_storage(ev.unchecked_ref());
            }
        });
        on_storage_event(cb.as_ref(), true);
        self.listener.replace(Some(cb));
    }

    fn on_notice(&self, text: &str) {
        match Notice::parse(text) {
            Some(Notice::Stored(t)) => self.take_copy(t),
            Some(Notice::Removed(k)) => self.take_removal(k),
            Some(Notice::Abandon(k)) => self.flight.abandon(Some(k)),
            None => {}
        }
    }

    /// The `storage` event: the mirror written by another tab (the fallback where
    /// BroadcastChannel is missing; the same news twice is harmless).
    fn on_storage(&self, ev: &Array) {
        if text(&ev.get(0)).as_deref() != Some(self.rec_key.as_str())
            || !self.store.is_area(&ev.get(3))
        {
            return;
        }
        match (text(&ev.get(1)), text(&ev.get(2))) {
            (Some(text), _) => self.take_copy(&text),
            (None, Some(old)) => {
                if let Ok(r) = self.decode(&old) {
                    self.take_removal(&r.key);
                }
            }
            (None, None) => {}
        }
    }

    /// Another tab stored `text`: shown here if it is newer than what this tab shows.
    fn take_copy(&self, text: &str) {
        let Ok(r) = self.decode(text) else { return };
        if r.scope == self.opts.scope && supersedes(&r, &self.rec.borrow(), self.rec_stored.get()) {
            self.show(&r, true);
        }
    }

    /// Another tab removed the record of `key`: this tab's next attempt gets a new key.
    fn take_removal(&self, key: &str) {
        if removes(key, &self.rec.borrow(), self.rec_stored.get()) {
            self.show(&self.fresh(), false);
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(cb) = self.listener.take() {
            on_storage_event(cb.as_ref(), false);
        }
    }
}
