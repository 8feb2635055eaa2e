// The thin driver of the scopes' machines (src/core/machine): it runs the commands each
// machine gives with the platform's own async (Web Locks, IndexedDB, fetch with its timeout,
// timers, BroadcastChannel, the `storage` event) and feeds each answer back to the machine
// through its named methods (src/browser/ffi.rs, `Machine`). It decides nothing. Also the
// page's synchronous Web Storage, which the machines read through their host, and the
// result, error and event objects. The package joins it into idemkey.js
// (scripts/post-pack.sh).

// A scope's driver state: its machine `m`, the Web Lock's release, its channel membership
// and `storage` listener, the promises of its submit sequences by number, and the
// IndexedDB transaction of the read whose answer is being fed.
export function attach(m) {
  return { m, release: null, member: null, listener: null, flights: new Map(), tx: null };
}

// The scope is done with: it hears nothing more, and its machine is freed. Answers still
// on their way (a lease's last renewal wake) find `d.m` null and are dropped.
export function detach(d) {
  if (d.member) chanClose(d);
  watchers.delete(d);
  // Freed once the machine's own call (which let it go) has returned; nothing is fed to
  // it after this.
  const m = d.m;
  d.m = null;
  queueMicrotask(() => m.free());
}

// The page's window; null in Node, a worker, anywhere else without one.
const page = () => (typeof Window == "function" && globalThis instanceof Window ? globalThis : null);

// The memory backend: one map per page, shared by every scope.
const memory = new Map();

// The Web Storage object of `kind` ("local" or "session"): null without a window, undefined
// when the browser gives none; throws what the browser throws when it refuses it.
function webStorage(kind) {
  const w = page();
  return w && ((kind == "local" ? w.localStorage : w.sessionStorage) ?? undefined);
}

// Whether backend `kind` can be used: true, false when the page has no window; throws the
// browser's refusal (or "storage unavailable").
export function storageUsable(kind) {
  const s = webStorage(kind);
  if (s === undefined) throw new Error("storage unavailable");
  return !!s;
}

// The backend `kind` as a Web Storage-like object (memory: the page's map); throws what
// the browser throws.
function area(kind) {
  if (kind == "memory") return null;
  const s = webStorage(kind);
  if (!s) throw new Error(s === undefined ? "storage unavailable" : "no window");
  return s;
}

export function storageGet(kind, key) {
  const s = area(kind);
  return s ? s.getItem(key) : memory.get(key) ?? null;
}

export function storageSet(kind, key, value) {
  const s = area(kind);
  s ? s.setItem(key, value) : memory.set(key, value);
}

export function storageRemove(kind, key) {
  try {
    const s = area(kind);
    s ? s.removeItem(key) : memory.delete(key);
  } catch {}
}

// The keys of backend `kind` that start with `prefix`, made before any is removed.
export function storageKeys(kind, prefix) {
  try {
    const s = area(kind);
    const keys = s ? Array.from({ length: s.length }, (_, i) => s.key(i)) : [...memory.keys()];
    return keys.filter((k) => k != null && k.startsWith(prefix));
  } catch {
    return [];
  }
}

// Whether the page has the Web Locks API.
export function webLocks() {
  const locks = globalThis.navigator && navigator.locks;
  return !!locks && typeof locks.request == "function";
}

// Asks for the Web Lock `name`: `lockGranted()` once held (kept until `unlock`), or
// `lockRefused()` when the request fails.
export function lock(d, name) {
  navigator.locks
    .request(name, () => new Promise((release) => {
      d.release = release;
      // Fed after the lock's callback has returned, as any other answer.
      queueMicrotask(() => d.m?.lockGranted());
    }))
    .catch(() => {
      if (!d.release) d.m?.lockRefused();
    });
}

export function unlock(d) {
  const release = d.release;
  d.release = null;
  release();
}

// Calls `m.woken(code)` after `ms` milliseconds; 0: in a microtask, after the reactions
// already queued.
export function wake(d, ms, code) {
  const f = () => d.m?.woken(code);
  ms ? setTimeout(f, ms) : queueMicrotask(f);
}

// The promise of submit sequence `no`, made on first ask.
export function promise(d, no) {
  let f = d.flights.get(no);
  if (!f) {
    f = {};
    f.p = new Promise((ok, fail) => Object.assign(f, { ok, fail }));
    d.flights.set(no, f);
  }
  return f.p;
}

// Settles sequence `no`'s promise.
export function settle(d, no, ok, value) {
  promise(d, no);
  const f = d.flights.get(no);
  d.flights.delete(no);
  (ok ? f.ok : f.fail)(value);
}

// The page's one BroadcastChannel, opened on first use and kept: making one costs the page
// about half a millisecond. Messages are `[name, text]`; `members` maps a name to its
// members, each a scope's driver state.
let chan;
const members = new Map();

// The page's one `storage` listener, added on first use and kept (adding one took 50 us a
// scope); `watchers`: the scopes' driver states it calls, each with its `listener`.
let watching = false;
const watchers = new Set();

// Calls the members of `name` but `from` with `text`, each while it still is one.
function deliver(name, text, from) {
  for (const d of [...(members.get(name) || [])]) if (d != from && members.get(name)?.has(d)) d.m?.notice(text);
}

// Hears the scope's channel (`name`) and the `storage` events of key `name` in backend
// `kind`: `m.notice(text)`, `m.storageEvent(newValue, oldValue)`.
export function listen(d, name, kind) {
  if (typeof BroadcastChannel == "function") {
    if (!chan) {
      chan = new BroadcastChannel("idemkey");
      chan.onmessage = (e) => {
        const [n, text] = Array.isArray(e.data) ? e.data : [];
        if (typeof text == "string") deliver(n, text);
      };
    }
    members.set(name, (members.get(name) || new Set()).add(d));
    d.member = name;
  }
  const w = page();
  if (!w) return;
  d.listener = (e) => {
    let mine = false;
    try {
      mine = e.storageArea === webStorage(kind);
    } catch {}
    if (e.key === name && mine) d.m?.storageEvent(e.newValue, e.oldValue);
  };
  if (!watching) {
    watching = true;
    w.addEventListener("storage", (e) => {
      for (const d of [...watchers]) {
        // Each scope's call its own, as separate listeners were: a throw is reported, and
        // the others still hear the event.
        try {
          if (watchers.has(d)) d.listener(e);
        } catch (x) {
          setTimeout(() => {
            throw x;
          });
        }
      }
    });
  }
  watchers.add(d);
}

// Posts `text` to the other members of the scope's channel: in the other tabs and, in a
// task of its own as a channel would, in this page.
export function post(d, name, text) {
  if (!d.member) return;
  try {
    chan.postMessage([name, text]);
  } catch (e) {}
  if (members.get(name).size > 1) setTimeout(() => deliver(name, text, d));
}

function chanClose(d) {
  const set = members.get(d.member);
  set.delete(d);
  if (!set.size) members.delete(d.member);
}


// The page's connection to database `idemkey`, opened on first use.
let db;
// Why the connection was lost and opened again, for the request being answered.
let reopened = null;

// Runs `request(store)` in one transaction of `mode`; resolves with its result: a write's
// once committed; a read's as soon as the request succeeds (what it read is the committed
// state), or once the transaction ends with `whole` (a cursor's request succeeds once per
// step), or, with `keep`, a read in a transaction kept open for a write (`keep(tx)` is
// given it first). Rejects when the page has no IndexedDB, when it fails or, on open, does not answer
// within 5 s. A connection the browser closed or lost under the page (WebKit: "Connection
// to Indexed Database server lost"; a closed one throws InvalidStateError) is opened again
// and the request made once more.
function inStore(mode, request, whole, keep) {
  const factory = globalThis.indexedDB;
  if (!factory) return Promise.reject(new Error("IndexedDB unavailable"));
  const go = () => once(factory, mode, request, whole, keep);
  return orAgain(go(), go);
}

// `p`, or `again()` once when `p` failed with the connection lost or closed under the page
// (`reopened` then says why).
function orAgain(p, again) {
  return p.catch((e) => {
    if (e?.name != "InvalidStateError" && e?.name != "UnknownError") throw e;
    return again().then((v) => {
      reopened = errorText(e);
      return v;
    });
  });
}

function once(factory, mode, request, whole, keep) {
  if (!db) {
    db = new Promise((ok, fail) => {
      setTimeout(() => fail(new DOMException("IndexedDB did not open in 5 s", "TimeoutError")), 5e3);
      const open = factory.open("idemkey", 1);
      open.onupgradeneeded = () => open.result.createObjectStore("records");
      open.onsuccess = () => {
        const conn = open.result;
        conn.onclose = () => { db = null; };
        conn.onversionchange = () => { conn.close(); db = null; };
        ok(conn);
      };
      open.onerror = () => fail(open.error);
    });
    db.catch(() => { db = null; });
  }
  return db
    .then((conn) => new Promise((ok, fail) => {
      const tx = conn.transaction("records", mode);
      const req = request(tx.objectStore("records"));
      if (keep) {
        keep(tx);
        req.onsuccess = () => ok(req.result);
      }
      if (mode == "readonly" && !whole) req.onsuccess = () => ok(req.result);
      tx.oncomplete = () => ok(req.result);
      tx.onabort = () => fail(tx.error || req.error);
    }))
    .catch((e) => { db = null; throw e; });
}

// Feeds the scope's machine a request's outcome: `idbReopened(why)` first when the connection had to be
// opened again, then `ok(value)` or `fail(why)`.
function answer(d, p, ok, fail) {
  p.then(
    (v) => {
      const r = reopened;
      reopened = null;
      if (r) d.m?.idbReopened(r);
      ok(v);
    },
    (e) => fail(errorText(e)),
  );
}

// Reads `key` (`lease`: the lease): `m.idbRead(text or null, null, lease)`, or
// `m.idbRead(null, why, lease)`. The read is made in a readwrite transaction, which stays
// active while the machine answers it in the same pass of microtasks (src/browser/live.rs
// feeds an answer and runs the commands it gives in one call): `d.tx` is that transaction
// while the answer is fed, and only then. A write the machine asks for in its answer goes
// into it: the write a submit makes once it has read (its pending key), one commit where
// two transactions would make two; and the lease's, which lands before any other tab's
// transaction.
export function idbGet(d, key, lease) {
  let tx;
  const read = (v, e) => d.m?.idbRead(v, e, lease);
  const fed = (v) => {
    d.tx = tx;
    try {
      read(text(v) ?? null, null);
    } finally {
      d.tx = null;
    }
  };
  answer(d, inStore("readwrite", (s) => s.get(key), false, (t) => (tx = t)), fed, (e) => read(null, e));
}

// Stores `value` under `key` (null deletes it): `m.idbWritten(null, lease)` once committed,
// or `m.idbWritten(why, lease)`. In the transaction of the read being answered, while that
// one is active; else a record's write gets a transaction of its own, and a lease's is not
// made.
export function idbPut(d, key, value, lease) {
  const put = (s) => (value == null ? s.delete(key) : s.put(value, key));
  const tx = d.tx;
  d.tx = null;
  let p;
  try {
    if (!tx) throw new DOMException("no read's transaction", "TransactionInactiveError");
    const req = put(tx.objectStore("records"));
    p = new Promise((ok, fail) => {
      tx.oncomplete = ok;
      tx.onabort = () => fail(tx.error || req.error);
    });
    // A record's write whose shared transaction the browser aborted with the connection
    // is made again on a new one, as `inStore` does; the lock is still held. A lease's is
    // not: its read would no longer be the one it answers.
    if (!lease) p = orAgain(p, () => inStore("readwrite", put));
  } catch (e) {
    // No transaction, or no longer active.
    p = lease ? Promise.reject(e) : inStore("readwrite", put);
  }
  const done = (e) => d.m?.idbWritten(e, lease);
  answer(d, p, () => done(null), done);
}

// Reads `key` alone, in a readonly transaction, which holds up no other tab's: a read made
// without the lock, which no write follows. `m.idbRead(text or null, null, false)`, or
// `m.idbRead(null, why, false)`.
export function idbPeek(d, key) {
  const read = (v, e) => d.m?.idbRead(v, e, false);
  answer(d, inStore("readonly", (s) => s.get(key)), (v) => read(text(v) ?? null, null), (e) => read(null, e));
}

// Deletes the entries under `prefix` for which `due(key, value)` is true, deciding inside
// the deleting transaction. A read-only scan goes first: a readwrite transaction holds up
// every other reader and writer of the store (a submit's among them), and most sweeps find
// nothing to delete. Errors are ignored: what is not swept now is swept by a later page.
export async function idbSweep(prefix, due) {
  let found = false;
  const scan = (remove) => (s) => {
    const cursor = s.openCursor(IDBKeyRange.bound(prefix, prefix + "\uffff"));
    cursor.onsuccess = () => {
      const c = cursor.result;
      if (!c) return;
      if (typeof c.key == "string" && typeof c.value == "string" && due(c.key, c.value)) {
        found = true;
        if (remove) c.delete();
      }
      c.continue();
    };
    return cursor;
  };
  try {
    await inStore("readonly", scan(false), true);
    if (found) await inStore("readwrite", scan(true));
  } catch {}
}

/**
 * One HTTP try: `fetch` with the JSON body, `content-type: application/json`, the extra
 * headers (`headers`: names and values joined by "\n", which neither may contain) and the
 * key's header, aborted after `ms`. Feeds `m.answer(status, body text, Retry-After,
 * Idempotent-Replayed)` once the whole body is read, or `m.noAnswer(timedOut)`.
 */
export async function send(d, url, method, headers, keyName, keyValue, body, credentials, ms) {
  const c = new AbortController();
  const t = setTimeout(() => c.abort(), ms);
  let a;
  try {
    const h = new Headers({ "content-type": "application/json" });
    const p = headers ? headers.split("\n") : [];
    for (let i = 0; i < p.length; i += 2) h.set(p[i], p[i + 1]);
    h.set(keyName, keyValue);
    // The signal goes to fetch itself too: WebKit does not always abort a fetch whose only
    // signal is its Request's, once nothing else holds that Request.
    const r = await fetch(new Request(url, { method, headers: h, body, credentials, signal: c.signal }), { signal: c.signal });
    a = [r.status, await r.text(), r.headers.get("retry-after"), r.headers.get("idempotent-replayed")];
  } catch {
    a = null;
  } finally {
    clearTimeout(t);
  }
  a ? d.m?.answer(...a) : d.m?.noAnswer(c.signal.aborted);
}

/**
 * What `submit()` resolves with; `body` is the response text, parsed as JSON when it is
 * JSON, `null` when empty.
 */
export function result(key, status, body, replayed, fromCache, attempts) {
  let b = null;
  if (body) {
    try {
      b = JSON.parse(body);
    } catch {
      b = body;
    }
  }
  return { key, status, ok: status >= 200 && status < 300, body: b, replayed, fromCache, attempts };
}

// `v` if it is a string, else undefined (`None` in Rust).
export const text = (v) => (typeof v == "string" ? v : undefined);

/** `JSON.stringify(v)`, or `[why]` when it throws or has no text for `v` (undefined, a function). */
export function stringify(v) {
  try {
    const body = JSON.stringify(v);
    return body == null ? ["undefined or a function"] : body;
  } catch (e) {
    return [errorText(e)];
  }
}

/** `obj[name]`, or undefined when its getter throws. */
export function read(obj, name) {
  try {
    return obj[name];
  } catch {
    return undefined;
  }
}

/** `name: message` of a thrown value (DOMException, Error), or "unknown error". */
export function errorText(e) {
  const field = (k) => text(read(e, k));
  const name = field("name") ?? "", message = field("message");
  return (message == null ? name : name ? `${name}: ${message}` : message) || "unknown error";
}


/** The `Error` idemkey throws and rejects with: `name` "IdemError" and a stable `code`. */
export function idemError(message, code) {
  const e = new Error(message);
  e.name = "IdemError";
  e.code = code;
  return e;
}

/**
 * Calls each of `fs` (the `onEvent`s of a scope's checkouts) with `{ type, ...fields, key }`,
 * the fields given as name and value pairs (a name left empty is none); what one throws is
 * logged, never rethrown (a page's bug in its event handler must not break a submit).
 */
export function emit(fs, type, key, n1, v1, n2, v2, n3, v3) {
  const e = { type };
  if (n1) e[n1] = v1;
  if (n2) e[n2] = v2;
  if (n3) e[n3] = v3;
  e.key = key;
  for (const f of fs) {
    try {
      f(e);
    } catch (x) {
      console.error("idemkey: onEvent threw", x);
    }
  }
}
