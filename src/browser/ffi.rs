//! The module's one meeting point with JavaScript, and its one file with `unsafe`: the
//! driver's functions (driver.js, with storage.js and idb.js) and the browser's the module
//! calls, each named and typed here; [`Machine`], whose named methods are how the driver
//! feeds a scope's machine what the browser answered; [`Due`], the sweep rule the driver
//! asks inside IndexedDB's transaction; the page-wide cell the registry of scopes lives in;
//! and the allocator.

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::RefCell;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;

use crate::core::machine::{Answer, Input, NoAnswer, Wake};
use crate::core::record::{sweep_due, Record};

#[wasm_bindgen(module = "/src/browser/driver.js")]
extern "C" {
    /// The driver's state for the scope whose machine is `m`.
    fn attach(m: Machine) -> JsValue;
    /// The scope is done with: it hears nothing more and `m` is freed.
    pub(crate) fn detach(d: &JsValue);

    /// Whether the page has the Web Locks API.
    #[wasm_bindgen(js_name = webLocks)]
    pub(crate) fn web_locks() -> bool;

    /// Asks for the Web Lock `name`.
    pub(crate) fn lock(d: &JsValue, name: &str);
    /// Releases the Web Lock held.
    pub(crate) fn unlock(d: &JsValue);
    /// Sends one try (the extra headers' names and values joined by "\n").
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send(
        d: &JsValue,
        url: &str,
        method: &str,
        headers: &str,
        key_name: &str,
        key_value: &str,
        body: &str,
        credentials: &str,
        timeout_ms: f64,
    );
    /// Feeds `woken(code)` after `ms`.
    pub(crate) fn wake(d: &JsValue, ms: f64, code: u32);
    /// The promise of submit sequence `no`.
    pub(crate) fn promise(d: &JsValue, no: u32) -> Promise;
    /// Settles sequence `no`'s promise.
    pub(crate) fn settle(d: &JsValue, no: u32, ok: bool, value: &JsValue);
    /// Posts `text` on the scope's channel `name`.
    pub(crate) fn post(d: &JsValue, name: &str, text: &str);
    /// Hears the channel `name` and the `storage` events of key `name` in backend `kind`.
    pub(crate) fn listen(d: &JsValue, name: &str, kind: u32);
    /// Calls each `onEvent` of `fs` with `{ type, [n1]: v1, [n2]: v2, [n3]: v3, key }`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn emit(
        fs: &Array,
        kind: &str,
        key: &str,
        n1: &str,
        v1: JsValue,
        n2: &str,
        v2: JsValue,
        n3: &str,
        v3: JsValue,
    );

    /// `{ key, status, ok, body, replayed, fromCache, attempts }`, `body` parsed as JSON
    /// when it is JSON, `null` when empty.
    pub(crate) fn result(
        key: &str,
        status: u16,
        body: &str,
        replayed: bool,
        from_cache: bool,
        attempts: u32,
    ) -> JsValue;
    /// An `Error` with `name` "IdemError", `message` and `code`.
    #[wasm_bindgen(js_name = idemError)]
    pub(crate) fn idem_error(message: &str, code: &str, reason: &str) -> JsValue;
    /// `name: message` of a thrown JS value, or "unknown error".
    #[wasm_bindgen(js_name = errorText)]
    pub(crate) fn error_text(e: &JsValue) -> String;
    /// `v` if it is a string.
    pub(crate) fn text(v: &JsValue) -> Option<String>;
    /// The canonical JSON of `JSON.stringify(v)` (members sorted, no whitespace), or
    /// `[why]` when JSON cannot carry `v`.
    pub(crate) fn stringify(v: &JsValue) -> JsValue;
    /// The object `JSON.parse(t)` gives, or why there is none (a string).
    #[wasm_bindgen(js_name = parseObject)]
    pub(crate) fn parse_object(t: &str) -> JsValue;
    /// `o`'s own member `name` (undefined: none, or `o` is not an object).
    pub(crate) fn member(o: &JsValue, name: &str) -> JsValue;
}

#[wasm_bindgen(module = "/src/browser/storage.js")]
extern "C" {
    /// Whether Web Storage `kind` can be used (false: no window); throws the refusal.
    #[wasm_bindgen(catch, js_name = storageUsable)]
    pub(crate) fn storage_usable(kind: u32) -> Result<bool, JsValue>;
    /// `getItem`; throws what the browser throws.
    #[wasm_bindgen(catch, js_name = storageGet)]
    pub(crate) fn storage_get(kind: u32, key: &str) -> Result<JsValue, JsValue>;
    /// `setItem`; throws what the browser throws.
    #[wasm_bindgen(catch, js_name = storageSet)]
    pub(crate) fn storage_set(kind: u32, key: &str, value: &str) -> Result<(), JsValue>;
    /// `removeItem`, errors ignored.
    #[wasm_bindgen(js_name = storageRemove)]
    pub(crate) fn storage_remove(kind: u32, key: &str);
    /// The keys starting with `prefix`.
    #[wasm_bindgen(js_name = storageKeys)]
    pub(crate) fn storage_keys(kind: u32, prefix: &str) -> Array;
}

#[wasm_bindgen(module = "/src/browser/idb.js")]
extern "C" {
    /// Reads `key` from IndexedDB in a transaction a write may follow into.
    #[wasm_bindgen(js_name = idbGet)]
    pub(crate) fn idb_get(d: &JsValue, key: &str);
    /// Reads `key` from IndexedDB alone, in a readonly transaction.
    #[wasm_bindgen(js_name = idbPeek)]
    pub(crate) fn idb_peek(d: &JsValue, key: &str);
    /// Writes (or, for `None`, deletes) `key` in IndexedDB.
    #[wasm_bindgen(js_name = idbPut)]
    pub(crate) fn idb_put(d: &JsValue, key: &str, value: Option<String>);
    /// Deletes the IndexedDB entries under `prefix` that `due(key, value)` names.
    #[wasm_bindgen(js_name = idbSweep)]
    pub(crate) fn idb_sweep(prefix: &str, due: JsValue);
}

#[wasm_bindgen(module = "/src/browser/options.js")]
extern "C" {
    /// `null`, or the `invalid-options` IdemError for what `fetch` would refuse: the
    /// endpoint or the extra headers, by the browser's own rules.
    pub(crate) fn refused(url: &str, headers: &str) -> JsValue;
    /// The options object's values by name (types checked); throws the `invalid-options`
    /// IdemError for an unknown or wrongly typed option.
    #[wasm_bindgen(catch, js_name = readOptions)]
    pub(crate) fn read_options(options: &JsValue) -> Result<JsValue, JsValue>;
    /// The value `readOptions` read for option `name`; undefined when not given.
    pub(crate) fn option(read: &JsValue, name: &str) -> JsValue;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    pub(crate) fn get_random_values(buf: &mut [u8]);
}

/// A [`Wake`] as the driver carries it.
pub(crate) fn wake_code(w: Wake) -> u32 {
    match w {
        Wake::Retry => 0,
        Wake::AnswerTurn => 1,
        Wake::SettleTurn => 2,
        Wake::OwnLock => 3,
        Wake::Deadline(n) => 4 + n,
    }
}

fn wake_of(code: u32) -> Wake {
    match code {
        0 => Wake::Retry,
        1 => Wake::AnswerTurn,
        2 => Wake::SettleTurn,
        3 => Wake::OwnLock,
        n => Wake::Deadline(n - 4),
    }
}

/// What takes the browser's answers for a scope: its machine, then the commands that follow.
pub(crate) trait Feed {
    /// Feeds `input` and runs what follows.
    fn feed(&self, input: Input);
}

/// A scope's machine as the driver holds it: each method feeds it one answer of the
/// browser.
///
/// The strings come in as `JsValue`s, read by [`text`] in one place: a `String` or
/// `Option<String>` parameter costs each method its own copy-in code in the glue (and a
/// `try`/`catch` to free what was copied) and its own conversion in the wasm.
#[wasm_bindgen(skip_typescript, private)]
pub struct Machine(Rc<dyn Feed>);

/// `v` if it is a string, else "" (`null`, `undefined`).
fn string(v: &JsValue) -> String {
    text(v).unwrap_or_default()
}

#[wasm_bindgen]
impl Machine {
    /// The scope's Web Lock is held.
    #[wasm_bindgen(js_name = lockGranted)]
    pub fn lock_granted(&self) {
        self.0.feed(Input::LockGranted);
    }

    /// The Web Lock request failed.
    #[wasm_bindgen(js_name = lockRefused)]
    pub fn lock_refused(&self, reason: JsValue) {
        self.0.feed(Input::LockRefused(string(&reason)));
    }

    /// IndexedDB read `value` (a string, or none stored), or failed with `error` (a string,
    /// or none).
    #[wasm_bindgen(js_name = idbRead)]
    pub fn idb_read(&self, value: JsValue, error: JsValue) {
        let got = text(&error).map_or(Ok(text(&value)), Err);
        self.0.feed(Input::IdbRead(got));
    }

    /// IndexedDB committed the write, or failed with `error` (a string, or none).
    #[wasm_bindgen(js_name = idbWritten)]
    pub fn idb_written(&self, error: JsValue) {
        let done = text(&error).map_or(Ok(()), Err);
        self.0.feed(Input::IdbWritten(done));
    }

    /// IndexedDB's connection was opened again, for `reason` (a string).
    #[wasm_bindgen(js_name = idbReopened)]
    pub fn idb_reopened(&self, reason: JsValue) {
        self.0.feed(Input::IdbReopened(string(&reason)));
    }

    /// The try's answer: its status, body text, `Retry-After` and `Idempotent-Replayed`
    /// (each a string or none).
    pub fn answer(&self, status: u16, body: JsValue, retry_after: JsValue, replayed: JsValue) {
        self.0.feed(Input::Answer(Answer {
            status,
            body: string(&body),
            retry_after: text(&retry_after),
            replayed: text(&replayed),
        }));
    }

    /// The try got no answer; `timed_out`: its timeout aborted it.
    #[wasm_bindgen(js_name = noAnswer)]
    pub fn no_answer(&self, timed_out: bool) {
        let why = if timed_out {
            NoAnswer::Timeout
        } else {
            NoAnswer::Network
        };
        self.0.feed(Input::NoAnswer(why));
    }

    /// The wake numbered `code` ([`wake_code`]) has come.
    pub fn woken(&self, code: u32) {
        self.0.feed(Input::Woken(wake_of(code)));
    }

    /// A notice (a string) on the scope's channel.
    pub fn notice(&self, message: JsValue) {
        self.0.feed(Input::Notice(string(&message)));
    }

    /// The `storage` event of the record's key: its new and old value (each a string or
    /// none).
    #[wasm_bindgen(js_name = storageEvent)]
    pub fn storage_event(&self, new: JsValue, old: JsValue) {
        self.0.feed(Input::StorageEvent {
            new: text(&new),
            old: text(&old),
        });
    }
}

#[wasm_bindgen(module = "/src/browser/due.js")]
extern "C" {
    /// `d`'s method as a function of `(key, value)`.
    #[wasm_bindgen(js_name = due)]
    fn due_function(d: Due) -> JsValue;
}

/// The driver's state for the scope whose machine `feed` takes the browser's answers.
pub(crate) fn attach_machine(feed: Rc<dyn Feed>) -> JsValue {
    attach(Machine(feed))
}

/// The sweep rule as the driver's `idbSweep` asks it, `due(key, value)`: core's, for one
/// namespace at one moment. A class whose method due.js hands the driver as a function,
/// not a `Closure`: the closure machinery (its glue, its table of destructors) weighs more.
/// The garbage collector frees it once the sweep has let the function go.
#[wasm_bindgen(skip_typescript, private)]
pub struct Due {
    /// The namespace swept.
    namespace: String,
    /// When the sweep began, in ms since the epoch.
    now: f64,
    /// The page's reader of a stored record's text.
    decode: fn(&str) -> crate::error::Result<Record>,
}

#[wasm_bindgen]
impl Due {
    /// Whether the IndexedDB entry `key` holding `value` (strings) is due for deletion.
    pub fn due(&self, key: JsValue, value: JsValue) -> bool {
        sweep_due(
            &self.namespace,
            &string(&key),
            &string(&value),
            self.now,
            self.decode,
        )
    }
}

/// [`Due::due`] for `namespace` at `now`, as a function of `(key, value)`, reading records
/// with `decode`.
pub(crate) fn due(
    namespace: String,
    now: f64,
    decode: fn(&str) -> crate::error::Result<Record>,
) -> JsValue {
    due_function(Due {
        namespace,
        now,
        decode,
    })
}

/// A `RefCell` that can live in a `static`: page-wide state (the registry of scopes).
pub(crate) struct PageCell<T>(RefCell<T>);

#[cfg(target_feature = "atomics")]
compile_error!("idemkey's page-wide state assumes a single-threaded wasm module");

// SAFETY: the module is single-threaded (no atomics, checked above), so no other thread
// can ever reach the cell.
unsafe impl<T> Sync for PageCell<T> {}

impl<T> PageCell<T> {
    /// A cell holding `value`.
    pub(crate) const fn new(value: T) -> PageCell<T> {
        PageCell(RefCell::new(value))
    }

    /// Runs `f` with the value.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.borrow_mut())
    }
}

// lol_alloc's free list instead of std's dlmalloc: the module allocates a few small strings
// per call, so a list walked per allocation stays short, and freed neighbours are merged.
#[global_allocator]
// SAFETY: the module is single-threaded (see PageCell).
static ALLOC: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

/// The `onEvent`s of a scope's checkouts as the driver's `emit` takes them.
pub(crate) fn functions(fs: &[(u32, Function)]) -> Array {
    fs.iter().map(|(_, f)| JsValue::from(f)).collect()
}
