//! What goes in and out of a scope's machine: the [`Input`]s the driver feeds it (what the
//! browser answered), the [`Command`]s it asks the driver to run, and the [`Event`]s and
//! [`Reply`]s a page sees. Every name the driver and the machine share is here.

use alloc::rc::Rc;

use crate::core::options::{Options, StorageKind};
use crate::error::Error;
use crate::prelude::*;

/// What the browser answered, fed back to the machine that asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The scope's Web Lock is held ([`Command::Lock`]).
    LockGranted,
    /// The Web Lock request failed, for this reason: the record becomes this tab's alone.
    LockRefused(String),
    /// IndexedDB's answer to [`Command::IdbGet`]: the text stored under the record's key, or
    /// why the read failed (also: the page has no IndexedDB).
    IdbRead(Result<Option<String>, String>),
    /// IndexedDB committed (or failed) [`Command::IdbPut`].
    IdbWritten(Result<(), String>),
    /// IndexedDB's connection was lost and opened again for the request being answered,
    /// which went through (fed just before that answer).
    IdbReopened(String),
    /// The answer to [`Command::Send`], read whole within its timeout.
    Answer(Answer),
    /// [`Command::Send`] got no answer.
    NoAnswer(NoAnswer),
    /// The time asked for by [`Command::Wake`] has come.
    Woken(Wake),
    /// A notice another tab (or another scope member of this page) posted on the channel.
    Notice(String),
    /// The window's `storage` event for the record's key in this store's backend (another
    /// tab wrote or removed the Web Storage copy): its `newValue`.
    StorageEvent(Option<String>),
}

/// An HTTP answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// Body text ("" when empty).
    pub body: String,
    /// `Retry-After`, as sent.
    pub retry_after: Option<String>,
    /// `Idempotent-Replayed`, as sent.
    pub replayed: Option<String>,
}

/// Why a try got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoAnswer {
    /// Connection failed, dropped, CORS refused, ...
    Network,
    /// The try's timeout aborted it.
    Timeout,
}

/// What a [`Command::Wake`] is for; fed back as [`Input::Woken`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The backoff before the next try is over.
    Retry,
    /// The final answer is in the mirror and the submit settled: now to IndexedDB.
    AnswerTurn,
    /// The turn of a job that takes the lock of a record this tab alone holds.
    OwnLock,
    /// The `deadlineMs` of the submit sequence so numbered has come: if it still waits for
    /// the scope's lock (another tab holds it, perhaps frozen), it ends.
    Deadline(u32),
}

/// One HTTP try.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The options of the `Checkout` whose submit sends it: the endpoint, method, extra
    /// headers, the key's header name and `credentials` (shared, not copied per try).
    pub send: Rc<Options>,
    /// The key as the header carries it (plain or sf-string).
    pub key_value: String,
    /// The JSON body.
    pub body: String,
    /// Abort the try after this long.
    pub timeout_ms: f64,
}

/// What the machine asks the driver to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Request the Web Lock `name`; answer [`Input::LockGranted`] once held, or
    /// [`Input::LockRefused`].
    Lock {
        /// The lock's name.
        name: String,
    },
    /// Release the Web Lock held.
    Unlock,
    /// Read `key` from IndexedDB; answer [`Input::IdbRead`].
    IdbGet {
        /// The storage key.
        key: String,
    },
    /// Read `key` from IndexedDB alone, with no write to follow (a stored answer read
    /// without the lock): it holds up no other tab's transaction. Answer [`Input::IdbRead`].
    IdbPeek {
        /// The storage key.
        key: String,
    },
    /// Write `text` under `key` in IndexedDB (`None` deletes); answer [`Input::IdbWritten`]
    /// once committed. Requests are made in the order asked.
    IdbPut {
        /// The storage key.
        key: String,
        /// The text, or `None` to delete.
        text: Option<String>,
    },
    /// Delete the IndexedDB entries under `prefix` for which `Scope::due` answers true,
    /// asked inside the deleting transaction; nothing is fed back.
    IdbSweep {
        /// `namespace:`.
        prefix: String,
    },
    /// Send one try; answer [`Input::Answer`] or [`Input::NoAnswer`].
    Send(Request),
    /// Feed [`Input::Woken`] with `wake` after `ms` milliseconds; 0: in a microtask, after
    /// the reactions already queued (those of a promise just settled among them).
    Wake {
        /// The delay.
        ms: f64,
        /// What for.
        wake: Wake,
    },
    /// Deliver the event to the `onEvent` of every open `Checkout` of the scope.
    Emit(Event),
    /// Settle the promise of the submit sequence numbered `flight`.
    Settle {
        /// The sequence's number ([`crate::core::machine::Submitted`]).
        flight: u32,
        /// What it resolves or rejects with.
        outcome: Result<Reply, Error>,
    },
    /// Post `text` on the scope's channel (`name`) to the other tabs and scope members.
    Post {
        /// The channel member name: the record's storage key.
        name: String,
        /// The notice.
        text: String,
    },
    /// Start hearing the scope's channel (`name`) and `storage` events for key `name` as
    /// [`Input::Notice`] and [`Input::StorageEvent`].
    Listen {
        /// The record's storage key.
        name: String,
        /// The Web Storage backend whose `storage` events count.
        area: StorageKind,
    },
}

/// What `submit()` resolves with.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The key the answer belongs to.
    pub key: String,
    /// HTTP status.
    pub status: u16,
    /// The body text.
    pub body: String,
    /// `Idempotent-Replayed: true`.
    pub replayed: bool,
    /// From the stored record, nothing sent.
    pub from_cache: bool,
    /// Tries sent for the key so far.
    pub attempts: u32,
}

/// One event for `onEvent`, with the key it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The key every event carries.
    pub key: String,
    /// What happened.
    pub kind: EventKind,
}

/// The events a page hears, by `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// `attempt`: a try is about to be sent; counts tries for this key (persisted).
    Attempt {
        /// 1-based try number for this key.
        attempt: u32,
    },
    /// `retry`: a try failed in a retryable way; the next follows after `delay_ms`.
    Retry {
        /// The try that failed.
        attempt: u32,
        /// Wait before the next try.
        delay_ms: u32,
        /// `timeout`, `network-error` or `status-NNN`.
        reason: String,
    },
    /// `response`: a try got an HTTP response (final or retryable).
    Response {
        /// The try that got it.
        attempt: u32,
        /// HTTP status.
        status: u16,
        /// The server said `Idempotent-Replayed: true`.
        replayed: bool,
    },
    /// `state`: the record's state changed (here or in another tab).
    State {
        /// The new state.
        state: &'static str,
        /// The state before.
        previous: &'static str,
    },
    /// `key-changed`: the key shown changed without a `reset()` or `finish()` of this page.
    KeyChanged {
        /// The key shown before.
        previous: String,
    },
    /// `storage-fallback`: a backend failed and the record moved to the next one.
    StorageFallback {
        /// The failed backend (`indexeddb` or a [`StorageKind`] name).
        from: &'static str,
        /// The backend now in use.
        to: &'static str,
        /// The browser's error.
        reason: String,
    },
    /// `storage-reopened`: IndexedDB's connection was lost and opened again.
    StorageReopened {
        /// Why it was lost.
        reason: String,
    },
    /// `storage-corrupt`: a stored record could not be read; it was set aside.
    StorageCorrupt {
        /// Why it could not be read.
        reason: String,
        /// Where the unreadable text now lives.
        quarantine_key: String,
    },
}
