//! The module's one meeting point with JavaScript, and its one file with `unsafe`: the
//! driver's functions (driver.js, with storage.js and idb.js) and the browser's the module
//! calls, each named and typed here; [`Machine`], whose `feed`, with numbered inputs, is how
//! the driver feeds a scope's machine what the browser answered, and whose `due` answers the
//! sweep rule inside IndexedDB's transaction; the page-wide cell the registry of scopes
//! lives in; and the allocator.

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::RefCell;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;

use crate::core::machine::{Answer, Input, NoAnswer, Wake};

#[wasm_bindgen(module = "/src/browser/driver.js")]
extern "C" {
    /// The driver's state for the scope whose machine is `m`.
    fn attach(m: Machine) -> JsValue;
    /// The scope is done with: it hears nothing more and `m` is freed.
    pub(crate) fn detach(d: &JsValue);

    /// The time of an HTTP-date by `Date.parse` (GMT when it names no zone), or NaN.
    #[wasm_bindgen(js_name = dateMs)]
    pub(crate) fn date_ms(v: &str) -> f64;

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
    /// What `v` is: 0 undefined, 1 null, 2 false, 3 true, 4 a number, 5 a string, 6 an
    /// array, 7 another object.
    pub(crate) fn kind(v: &JsValue) -> u32;
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
    /// Reads `key` from IndexedDB: in a transaction a write may follow into, or, with
    /// `alone`, in a readonly one.
    #[wasm_bindgen(js_name = idbGet)]
    pub(crate) fn idb_get(d: &JsValue, key: &str, alone: bool);
    /// Writes (or, for `None`, deletes) `key` in IndexedDB.
    #[wasm_bindgen(js_name = idbPut)]
    pub(crate) fn idb_put(d: &JsValue, key: &str, value: Option<&str>);
    /// Deletes the IndexedDB entries under `prefix` that the machine's `due(key, value)`
    /// names.
    #[wasm_bindgen(js_name = idbSweep)]
    pub(crate) fn idb_sweep(d: &JsValue, prefix: &str);
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
        Wake::OwnLock => 2,
        Wake::Deadline(n) => 3 + n,
    }
}

fn wake_of(code: u32) -> Wake {
    match code {
        0 => Wake::Retry,
        1 => Wake::AnswerTurn,
        2 => Wake::OwnLock,
        n => Wake::Deadline(n - 3),
    }
}

/// What takes the browser's answers for a scope: its machine, then the commands that follow.
pub(crate) trait Feed {
    /// Feeds `input` and runs what follows.
    fn feed(&self, input: Input);
    /// Whether the storage entry `key` holding `value` is due for the sweep.
    fn due(&self, key: &str, value: &str) -> bool;
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

/// The numbers of [`Machine::feed`]'s inputs, as driver.js and idb.js name them. One method with a
/// number, not a method per input: each exported method costs the wasm its own borrow
/// check and the glue its own wrapper (0.63 KiB gzipped in all for ten).
mod input {
    pub const LOCK_GRANTED: u32 = 0;
    pub const LOCK_REFUSED: u32 = 1;
    pub const IDB_READ: u32 = 2;
    pub const IDB_WRITTEN: u32 = 3;
    pub const IDB_REOPENED: u32 = 4;
    pub const ANSWER: u32 = 5;
    pub const NO_ANSWER: u32 = 6;
    pub const WOKEN: u32 = 7;
    pub const NOTICE: u32 = 8;
    pub const STORAGE_EVENT: u32 = 9;
}

#[wasm_bindgen]
impl Machine {
    /// What the browser answered: `input` (one of [`input`]'s numbers), with the number `n`
    /// and the strings (or none) `a`, `b` and `c` that input takes:
    /// - `LOCK_GRANTED`: the scope's Web Lock is held;
    /// - `LOCK_REFUSED`: the request failed, for `a`;
    /// - `IDB_READ`: IndexedDB read `a` (none stored: none), or failed for `b`;
    /// - `IDB_WRITTEN`: IndexedDB committed the write, or failed for `a`;
    /// - `IDB_REOPENED`: IndexedDB's connection was opened again, for `a`;
    /// - `ANSWER`: the try's answer, status `n`, body `a`, `Retry-After` `b` and
    ///   `Idempotent-Replayed` `c`;
    /// - `NO_ANSWER`: the try got none; `n` is 1 when its timeout aborted it;
    /// - `WOKEN`: the wake numbered `n` ([`wake_code`]) has come;
    /// - `NOTICE`: the message `a` on the scope's channel;
    /// - `STORAGE_EVENT`: the `storage` event of the record's key, new value `a`.
    pub fn feed(&self, input: u32, n: u32, a: JsValue, b: JsValue, c: JsValue) {
        self.0.feed(match input {
            input::LOCK_GRANTED => Input::LockGranted,
            input::LOCK_REFUSED => Input::LockRefused(string(&a)),
            input::IDB_READ => Input::IdbRead(text(&b).map_or(Ok(text(&a)), Err)),
            input::IDB_WRITTEN => Input::IdbWritten(text(&a).map_or(Ok(()), Err)),
            input::IDB_REOPENED => Input::IdbReopened(string(&a)),
            input::ANSWER => Input::Answer(Answer {
                status: n as u16,
                body: string(&a),
                retry_after: text(&b),
                replayed: text(&c),
            }),
            input::NO_ANSWER => Input::NoAnswer(if n == 1 {
                NoAnswer::Timeout
            } else {
                NoAnswer::Network
            }),
            input::WOKEN => Input::Woken(wake_of(n)),
            input::NOTICE => Input::Notice(string(&a)),
            input::STORAGE_EVENT => Input::StorageEvent(text(&a)),
            // The driver sends no other number.
            _ => return,
        });
    }

    /// Whether the IndexedDB entry `key` holding `value` (strings) is due for deletion, by
    /// the sweep rule of the machine's namespace. A method of the machine the driver holds,
    /// not a function of its own: a `Closure` or a class for it weighs more in the glue.
    pub fn due(&self, key: JsValue, value: JsValue) -> bool {
        self.0.due(&string(&key), &string(&value))
    }
}

/// The driver's state for the scope whose machine `feed` takes the browser's answers.
pub(crate) fn attach_machine(feed: Rc<dyn Feed>) -> JsValue {
    attach(Machine(feed))
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
