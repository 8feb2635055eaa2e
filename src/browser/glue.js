// The browser APIs the module reaches without web-sys (each web-sys binding is an import of
// the wasm and a shim in the generated glue; one function here stands for several): Web
// Locks, BroadcastChannel, IndexedDB, Web Storage, fetch with its timeout, a sleep, the
// executor's microtasks and promises, and the result, error and event objects. The package
// joins it into idemkey.js (scripts/post-pack.sh). Decisions stay in Rust.

// The executor's JS half (task.rs): a microtask, a promise's outcome reported to one
// callback, a promise settled from Rust.
export function microtask(f) {
  queueMicrotask(f);
}

// Calls `settled(id, ok, value)` once `p` settles.
export function watch(p, id, settled) {
  p.then((v) => settled(id, true, v), (e) => settled(id, false, e));
}

// A new promise and what settles it: [promise, resolve, reject].
export function deferred() {
  let d;
  const p = new Promise((ok, fail) => {
    d = [ok, fail];
  });
  return [p, ...d];
}

export function settle(d, ok, value) {
  d[ok ? 1 : 2](value);
}

// Resolves after `ms` milliseconds.
export function sleep(ms) {
  return new Promise((done) => setTimeout(done, ms));
}

// The page's window; null in Node, a worker, anywhere else without one.
const page = () => (typeof Window == "function" && globalThis instanceof Window ? globalThis : null);

// `localStorage` (`local`) or `sessionStorage`: null without a window, undefined when the
// browser gives none; throws what the browser throws when it refuses it (SecurityError).
export function webStorage(local) {
  const w = page();
  return w && ((local ? w.localStorage : w.sessionStorage) ?? undefined);
}

// One call on the Web Storage object `s`: `op` 0 getItem(key), 1 setItem(key, value),
// 2 removeItem(key), 3 the keys that start with `key` (one call instead of a wasm import
// per method). Throws what the browser throws.
export function storageOp(s, op, key, value) {
  if (op == 0) return s.getItem(key);
  if (op == 1) return s.setItem(key, value);
  if (op == 2) return s.removeItem(key);
  const keys = [];
  for (let i = 0; i < s.length; i++) {
    const k = s.key(i);
    if (k != null && k.startsWith(key)) keys.push(k);
  }
  return keys;
}

// Adds (`add`) or removes the window's `storage` event listener that calls `f` with
// `[key, newValue, oldValue, storageArea]` of the event (read here: a wasm import per getter
// costs more). The listener is kept on `f` to remove it.
export function onStorageEvent(f, add) {
  const w = page();
  if (!w) return;
  if (add) f.listener = (e) => f([e.key, e.newValue, e.oldValue, e.storageArea]);
  add ? w.addEventListener("storage", f.listener) : w.removeEventListener("storage", f.listener);
}

// Whether the page has the Web Locks API.
export function webLocks() {
  const locks = globalThis.navigator && navigator.locks;
  return !!locks && typeof locks.request == "function";
}

// Resolves with the lock's release function once held; null when there is no Web Locks.
export function lockAcquire(name) {
  if (!webLocks()) return null;
  return new Promise((held) => {
    navigator.locks.request(name, () => new Promise(held)).catch(() => held(null));
  });
}

// The page's one BroadcastChannel, opened on first use and kept: making one costs the page
// about half a millisecond, which a channel per checkout added to every `Checkout.open`.
// Messages are `[name, text]`; `members` maps a name to its members, `[name, onText]` each.
let chan;
const members = new Map();

// Calls the members of `name` but `from` with `text`, each while it still is one.
function deliver(name, text, from) {
  for (const m of [...(members.get(name) || [])]) if (m != from && members.get(name)?.has(m)) m[1](text);
}

// A new member of `name`, or null when the page has no BroadcastChannel.
export function chanOpen(name, onText) {
  if (typeof BroadcastChannel != "function") return null;
  if (!chan) {
    chan = new BroadcastChannel("idemkey");
    chan.onmessage = (e) => {
      const [n, text] = Array.isArray(e.data) ? e.data : [];
      if (typeof text == "string") deliver(n, text);
    };
  }
  const m = [name, onText];
  members.set(name, (members.get(name) || new Set()).add(m));
  return m;
}

// Posts `text` to the other members of `m`'s name: in the other tabs and, in a task of its
// own as a channel would, in this page.
export function chanPost(m, text) {
  try {
    chan.postMessage([m[0], text]);
  } catch (e) {}
  if (members.get(m[0]).size > 1) setTimeout(() => deliver(m[0], text, m));
}

export function chanClose(m) {
  const set = members.get(m[0]);
  set.delete(m);
  if (!set.size) members.delete(m[0]);
}

// The page's connection to database `idemkey`, opened on first use.
let db;
// Why the connection was lost and opened again since `idbReopened()` last asked, if it was.
let reopened = null;

// Runs `request(store)` in one transaction of `mode`; resolves with its result: a write's
// once committed; a read's as soon as the request succeeds (what it read is the committed
// state, and waiting for the transaction to end only adds a turn of the browser's
// IndexedDB thread), or once the transaction ends with `whole` (a cursor's request
// succeeds once per step). null when the page has no IndexedDB; rejects when it fails or,
// on open, does not answer within 5 s. A connection the browser closed or lost under the
// page (WebKit: "Connection to Indexed Database server lost"; a closed one throws
// InvalidStateError) is opened again and the request made once more.
function inStore(mode, request, whole) {
  const factory = globalThis.indexedDB;
  if (!factory) return null;
  return once(factory, mode, request, whole).catch((e) => {
    const name = e && e.name;
    if (name != "InvalidStateError" && name != "UnknownError") throw e;
    return once(factory, mode, request, whole).then((v) => {
      reopened = errorText(e);
      return v;
    });
  });
}

function once(factory, mode, request, whole) {
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
      if (mode == "readonly" && !whole) req.onsuccess = () => ok(req.result);
      tx.oncomplete = () => ok(req.result);
      tx.onabort = () => fail(tx.error || req.error);
    }))
    .catch((e) => { db = null; throw e; });
}

// Why the connection was lost and opened again since the last call, or null; clears it.
export function idbReopened() {
  const r = reopened;
  reopened = null;
  return r;
}

export function idbGet(key) {
  return inStore("readonly", (s) => s.get(key));
}

// Stores `value` under `key`; null or undefined deletes it.
export function idbSet(key, value) {
  return inStore("readwrite", (s) => (value == null ? s.delete(key) : s.put(value, key)));
}

// Deletes the entries under `prefix` for which `due(key, value)` is true, deciding inside
// the deleting transaction. A read-only scan goes first: a readwrite transaction holds up
// every other reader and writer of the store (a submit's among them), and most sweeps find
// nothing to delete.
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
  const read = inStore("readonly", scan(false), true);
  if (!read) return null;
  await read;
  if (found) await inStore("readwrite", scan(true));
}

/**
 * One HTTP try: `fetch` with the JSON body, `content-type: application/json`, the extra
 * headers (`headers`: names and values joined by "\n", which neither may contain) and the
 * key's header, aborted after `ms`. Resolves with `[status, body text, Retry-After,
 * Idempotent-Replayed]` once the whole body is read; rejects with whether our timeout
 * aborted it (`true`) or it failed on its own (`false`: network error, CORS refusal).
 */
export async function send(url, method, headers, keyName, keyValue, body, credentials, ms) {
  const c = new AbortController();
  const t = setTimeout(() => c.abort(), ms);
  try {
    const h = new Headers({ "content-type": "application/json" });
    const a = headers ? headers.split("\n") : [];
    for (let i = 0; i < a.length; i += 2) h.set(a[i], a[i + 1]);
    h.set(keyName, keyValue);
    const r = await fetch(new Request(url, { method, headers: h, body, credentials, signal: c.signal }));
    const text = await r.text();
    return [r.status, text, r.headers.get("retry-after"), r.headers.get("idempotent-replayed")];
  } catch {
    throw c.signal.aborted;
  } finally {
    clearTimeout(t);
  }
}

// The last endpoint and headers `refused` accepted: a page opens its checkouts with the
// same ones, and making the Headers and the Request that check them cost 0.05 to 0.1 ms
// per open. The answer stays right for the page: whether a URL parses (and carries no
// credentials) does not depend on which http(s) address it is resolved against.
let accepted;

/**
 * Whether `fetch` would refuse the endpoint or the extra headers (`headers` as for
 * `send`), by the browser's own rules: `null`, or the `invalid-options` IdemError naming
 * the option (worded here as Rust's `Error::message` words it).
 */
export function refused(url, headers) {
  const asked = url + "\n\n" + headers;
  if (asked === accepted) return null;
  let option = "headers";
  try {
    const h = new Headers();
    const a = headers ? headers.split("\n") : [];
    for (let i = 0; i < a.length; i += 2) h.set(a[i], a[i + 1]);
    option = "endpoint";
    new Request(url);
    accepted = asked;
    return null;
  } catch (e) {
    return badOption(option, "refused by fetch: " + errorText(e));
  }
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

/**
 * `[JSON.stringify(v), its canonical form]`; `[why]` when it throws, has no text for `v`
 * (undefined, a function) or has no canonical form (see `canonical`).
 */
export function toJson(v) {
  try {
    const body = JSON.stringify(v);
    return body == null ? ["undefined or a function"] : [body, canonical(JSON.parse(body), 0)];
  } catch (e) {
    return [errorText(e)];
  }
}

/**
 * The canonical JSON of a parsed JSON value, which the payload's fingerprint hashes: object
 * keys sorted by UTF-16 code units (`sort()`'s order) at every level, no whitespace, the rest
 * as `JSON.stringify` writes it. The same text as the core's `Json::write_canonical` of the
 * value, and refused where the core's parser refuses: past 64 levels of nesting, or a string
 * with a lone surrogate (which no UTF-8 text can carry).
 */
function canonical(v, depth) {
  // Thrown as `{ message }`, which errorText words as the message alone.
  const refuse = (message) => {
    throw { message };
  };
  const string = (s) => (/\p{Cs}/u.test(s) ? refuse("lone surrogate in \\u escape") : JSON.stringify(s));
  if (typeof v == "string") return string(v);
  if (v === null || typeof v != "object") return JSON.stringify(v);
  if (++depth > 64) refuse("nesting deeper than 64 levels");
  if (Array.isArray(v)) return "[" + v.map((x) => canonical(x, depth)) + "]";
  return "{" + Object.keys(v).sort().map((k) => string(k) + ":" + canonical(v[k], depth)) + "}";
}

/** `name: message` of a thrown value (DOMException, Error), or "unknown error". */
export function errorText(e) {
  const field = (k) => text(read(e, k));
  const name = field("name") ?? "", message = field("message");
  return (message == null ? name : name ? `${name}: ${message}` : message) || "unknown error";
}

/** The `invalid-options` IdemError for `option`, worded as Rust's `Error::message` words it. */
const badOption = (option, reason) => idemError(`invalid option \`${option}\`: ${reason}`, "invalid-options");

/** The `Error` idemkey throws and rejects with: `name` "IdemError" and a stable `code`. */
export function idemError(message, code) {
  const e = new Error(message);
  e.name = "IdemError";
  e.code = code;
  return e;
}

// The fields of each event type, in the order `emit` passes their values.
const EVENT_FIELDS = {
  attempt: ["attempt"],
  retry: ["attempt", "delayMs", "reason"],
  response: ["attempt", "status", "replayed"],
  state: ["state", "previous"],
  "storage-fallback": ["from", "to", "reason"],
  "storage-corrupt": ["reason", "quarantineKey"],
  "key-changed": ["previous"],
  "storage-reopened": ["backend", "reason"],
};

/**
 * Calls `onEvent` (`f`) with `{ type, ...fields, key }`; what it throws is logged, never
 * rethrown (a page's bug in its event handler must not break a submit).
 */
export function emit(f, type, key, a, b, c) {
  const e = { type };
  const values = [a, b, c];
  EVENT_FIELDS[type].forEach((name, i) => {
    e[name] = values[i];
  });
  e.key = key;
  try {
    f(e);
  } catch (x) {
    console.error("idemkey: onEvent threw", x);
  }
}

// `Checkout.open`'s options: each name, the slot `readOptions` puts its value in, and what
// it must be. No prototype, so a name such as "toString" is unknown like any other.
const OPTIONS = {
  __proto__: null,
  scope: [0, "string"],
  endpoint: [1, "string"],
  method: [2, "string"],
  headers: [3, "headers"],
  headerName: [4, "string"],
  headerFormat: [5, "string"],
  ttlSeconds: [6, "number"],
  timeoutMs: [7, "number"],
  maxRetries: [8, "number"],
  backoff: [0, "backoff"],
  deadlineMs: [11, "number"],
  storage: [12, "string"],
  namespace: [13, "string"],
  credentials: [14, "string"],
  onEvent: [15, "function"],
};
const BACKOFF = { __proto__: null, baseMs: [9, "number"], maxMs: [10, "number"] };

/** Whether `v` is a plain object's kind of value (not null, an array or a function). */
const isObject = (v) => typeof v == "object" && v !== null && !Array.isArray(v);

/** `obj[name]`, or undefined when its getter throws. */
function read(obj, name) {
  try {
    return obj[name];
  } catch {
    return undefined;
  }
}

/**
 * Puts the own enumerable properties of `obj` (`option`, named `prefix` + name) into
 * `out` by `table`; throws `[option, reason]` for the first one that is unknown or of the
 * wrong type. `undefined` and `null` mean "not given".
 */
function fill(obj, option, prefix, table, out) {
  if (!isObject(obj)) throw [option, "must be an object"];
  for (const name of Object.keys(obj)) {
    const spec = table[name];
    if (!spec) throw [prefix + name, "is not a known option"];
    const v = read(obj, name);
    if (v == null) continue;
    const [slot, kind] = spec;
    if (kind == "backoff") {
      fill(v, "backoff", "backoff.", BACKOFF, out);
    } else if (kind == "headers") {
      if (!isObject(v)) throw ["headers", "must be an object"];
      const pairs = [];
      for (const h of Object.keys(v)) {
        const value = read(v, h);
        if (typeof value != "string") throw ["headers", "values must be strings"];
        pairs.push(h, value);
      }
      out[slot] = pairs;
    } else if (typeof v != kind) {
      throw [prefix + name, "must be a " + kind];
    } else {
      out[slot] = v;
    }
  }
}

/**
 * The options object read into 16 slots (the headers as `[name, value, ...]`), its types
 * checked and nothing else (the rules are the Rust core's); throws the `invalid-options`
 * IdemError (worded as Rust's `Error::message` words it) for the first unknown or wrongly
 * typed one.
 */
export function readOptions(options) {
  const out = new Array(16);
  try {
    fill(options, "options", "", OPTIONS, out);
  } catch (e) {
    if (Array.isArray(e)) throw badOption(...e);
    throw e;
  }
  return out;
}
