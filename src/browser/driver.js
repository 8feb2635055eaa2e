// The thin driver of the scopes' machines (src/core/machine): it runs the commands each
// machine gives with the platform's own async (Web Locks, fetch with its timeout, timers,
// BroadcastChannel, the `storage` event; IndexedDB in idb.js) and feeds each answer back to
// the machine through its method `feed(input, n, a, b, c)` (src/browser/ffi.rs,
// `Machine`), the input named by one of the numbers below. It decides nothing. Also the
// result, error and event objects. The page's Web Storage, which the machines read through
// their host, is storage.js. The package joins them into idemkey.js
// (scripts/post-pack.sh).
import { page, webStorage } from "./storage.js";

// The inputs `Machine.feed` takes from here, by the number it reads (src/browser/ffi.rs,
// `input`; idb.js has IndexedDB's), each with what follows it: a number, then strings or
// null. Not exported: the glue imports this module whole, as the wasm's import object.
const LOCK_GRANTED = 0; // ()
const LOCK_REFUSED = 1; // (0, why)
const ANSWER = 5; // (status, body, Retry-After, Idempotent-Replayed)
const NO_ANSWER = 6; // (1 when its timeout aborted the try)
const WOKEN = 7; // (wake code)
const NOTICE = 8; // (0, the channel's message)
const STORAGE_EVENT = 9; // (0, newValue)

// A scope's driver state: its machine `m`, the Web Lock's release, its channel membership
// and `storage` listener, the promises of its submit sequences by number, and the
// IndexedDB transaction of the read whose answer is being fed.
export function attach(m) {
  return { m, release: null, member: null, listener: null, flights: new Map(), tx: null };
}

// The scope is done with: it hears nothing more, and its machine is freed. Answers still
// on their way (a late wake or answer) find `d.m` null and are dropped.
export function detach(d) {
  if (d.member) chanClose(d);
  watchers.delete(d);
  // Freed once the machine's own call (which let it go) has returned; nothing is fed to
  // it after this.
  const m = d.m;
  d.m = null;
  queueMicrotask(() => m.free());
}

// Whether the page has the Web Locks API.
export function webLocks() {
  const locks = globalThis.navigator && navigator.locks;
  return !!locks && typeof locks.request == "function";
}

// Asks for the Web Lock `name`: LOCK_GRANTED once held (kept until `unlock`), or
// LOCK_REFUSED when the request fails.
export function lock(d, name) {
  navigator.locks
    .request(name, () => new Promise((release) => {
      d.release = release;
      // Fed after the lock's callback has returned, as any other answer.
      queueMicrotask(() => d.m?.feed(LOCK_GRANTED));
    }))
    .catch((e) => {
      if (!d.release) d.m?.feed(LOCK_REFUSED, 0, errorText(e));
    });
}

export function unlock(d) {
  const release = d.release;
  d.release = null;
  release();
}

// Feeds WOKEN with `code` after `ms` milliseconds; 0: in a microtask, after the reactions
// already queued.
export function wake(d, ms, code) {
  const f = () => d.m?.feed(WOKEN, code);
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
  for (const d of [...(members.get(name) || [])]) if (d != from && members.get(name)?.has(d)) d.m?.feed(NOTICE, 0, text);
}

// Hears the scope's channel (`name`) and the `storage` events of key `name` in backend
// `kind`: NOTICE with the message, STORAGE_EVENT with the new value.
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
  const w = page;
  if (!w) return;
  d.listener = (e) => {
    let mine = false;
    try {
      mine = e.storageArea === webStorage(kind);
    } catch {}
    if (e.key === name && mine) d.m?.feed(STORAGE_EVENT, 0, e.newValue);
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


/**
 * `h` (a Headers) with the extra headers set: `headers` holds their names and values
 * joined by "\n", which neither may contain. Throws what `Headers` throws (options.js
 * checks them with it at `open()`).
 */
export function withHeaders(h, headers) {
  const p = headers ? headers.split("\n") : [];
  for (let i = 0; i < p.length; i += 2) h.set(p[i], p[i + 1]);
  return h;
}

/**
 * One HTTP try: `fetch` with the JSON body, `content-type: application/json`, the extra
 * headers (`headers`: names and values joined by "\n", which neither may contain) and the
 * key's header, aborted after `ms`. Feeds ANSWER (status, body text, Retry-After,
 * Idempotent-Replayed) once the whole body is read, or NO_ANSWER (whether it timed out).
 */
export async function send(d, url, method, headers, keyName, keyValue, body, credentials, ms) {
  const c = new AbortController();
  const t = setTimeout(() => c.abort(), ms);
  let a;
  try {
    const h = withHeaders(new Headers({ "content-type": "application/json" }), headers);
    h.set(keyName, keyValue);
    const r = await fetch(url, { method, headers: h, body, credentials, signal: c.signal });
    a = [r.status, await r.text(), r.headers.get("retry-after"), r.headers.get("idempotent-replayed")];
  } catch {
    a = null;
  } finally {
    clearTimeout(t);
  }
  a ? d.m?.feed(ANSWER, ...a) : d.m?.feed(NO_ANSWER, c.signal.aborted);
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

// What `v` is, in one call where asking the wasm's way took one each (host.rs's `value`):
// 0 undefined, 1 null, 2 false, 3 true, 4 a number, 5 a string, 6 an array, 7 another object.
export const kind = (v) =>
  v === undefined
    ? 0
    : v === null
      ? 1
      : typeof v == "boolean"
        ? 2 + v
        : typeof v == "number"
          ? 4
          : typeof v == "string"
            ? 5
            : Array.isArray(v)
              ? 6
              : 7;

// The canonical JSON of a parsed JSON value: no whitespace, and every object's members
// sorted by their names' UTF-16 code units (sort()'s order), so that member order never
// changes a payload's fingerprint. Numbers and strings are written as JSON.stringify writes
// them, which is how they came in: the text is the one the core's canonical form gives.
const canonical = (v) =>
  !v || typeof v != "object"
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? `[${v.map(canonical)}]`
      : `{${Object.keys(v)
          .sort()
          .map((k) => JSON.stringify(k) + ":" + canonical(v[k]))}}`;

/**
 * The canonical JSON of `JSON.stringify(v)`, or `[why]` when it throws or has no text for
 * `v` (undefined, a function).
 */
export function stringify(v) {
  try {
    const body = JSON.stringify(v);
    return body == null ? ["undefined or a function"] : canonical(JSON.parse(body));
  } catch (e) {
    return [errorText(e)];
  }
}

// Whether `o` is a JSON object (not null, not an array), a plain object's kind of value
// (options.js reads the options with it too).
export const isObject = (o) => !!o && typeof o == "object" && !Array.isArray(o);

/** The object the JSON text `t` holds (a stored record's), or why it holds none, as a string. */
export function parseObject(t) {
  try {
    const o = JSON.parse(t);
    return isObject(o) ? o : "not a JSON object";
  } catch (e) {
    return "not JSON: " + errorText(e);
  }
}

/**
 * The time of the HTTP-date `v` by the browser's own parser, or NaN. asctime has no zone:
 * the grammar says GMT, and `Date.parse` would read local time.
 */
export const dateMs = (v) => Date.parse(/GMT$/.test(v) ? v : v + " GMT");

/**
 * `o`'s own member `name`; undefined when it has none or `o` is not an object. (Not
 * `Object.hasOwn`: Safari has it from 15.4 only.)
 */
export const member = (o, name) => (isObject(o) && Object.prototype.hasOwnProperty.call(o, name) ? o[name] : undefined);

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
export function idemError(message, code, reason) {
  const e = new Error(message);
  e.name = "IdemError";
  e.code = code;
  if (reason) e.reason = reason;
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
