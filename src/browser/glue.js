// The browser APIs the Rust glue uses through JS of its own: fetch with its timeout, the
// Web Lock, the BroadcastChannel and IndexedDB. One module (one file a page fetches), and
// each function here stands for several web-sys bindings, each of which would be an import
// of the wasm and a shim in the generated glue. Decisions stay in Rust; this only calls.

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
    const r = await fetch(url, { method, headers: h, body, credentials, signal: c.signal });
    const text = await r.text();
    return [r.status, text, r.headers.get("retry-after"), r.headers.get("idempotent-replayed")];
  } catch {
    throw c.signal.aborted;
  } finally {
    clearTimeout(t);
  }
}

/**
 * Whether `fetch` would refuse the endpoint or the extra headers (`headers` as for
 * `send`), by the browser's own rules: `null`, or `[option, the error]`.
 */
export function refused(url, headers) {
  let option = "headers";
  try {
    const h = new Headers();
    const a = headers ? headers.split("\n") : [];
    for (let i = 0; i < a.length; i += 2) h.set(a[i], a[i + 1]);
    option = "endpoint";
    new Request(url);
    return null;
  } catch (e) {
    return [option, e];
  }
}

/**
 * Takes the Web Lock `name` (`navigator.locks.request`): resolves with the function that
 * releases it once held, or with `null` if the request fails; `null` (no promise) where the
 * page has no Web Locks.
 */
export function lockAcquire(name) {
  const locks = globalThis.navigator && navigator.locks;
  if (!locks || typeof locks.request != "function") return null;
  return new Promise((held) => {
    locks.request(name, () => new Promise(held)).catch(() => held(null));
  });
}

/**
 * Joins the BroadcastChannel `name`, passing each string message to `f`; `null` where the
 * page has no BroadcastChannel.
 */
export function chanOpen(name, f) {
  if (typeof BroadcastChannel != "function") return null;
  const c = new BroadcastChannel(name);
  c.onmessage = (e) => {
    if (typeof e.data == "string") f(e.data);
  };
  return c;
}

/** Posts `message` on `c` (a closed channel throws: nothing to tell then). */
export function chanPost(c, message) {
  try {
    c.postMessage(message);
  } catch {}
}

/** Leaves the channel. */
export function chanClose(c) {
  c.close();
}

// IndexedDB: database "idemkey", object store "records", one connection per page, opened
// on first use, reopened after the browser closes it, given up after 5 s.
let db;

/**
 * Runs `f(store)` in a transaction of `mode`; resolves with its request's result: a read's
 * as soon as the request succeeds (what it read is the committed state; waiting for the
 * transaction to end would only add a turn of the browser's IndexedDB thread), a write's
 * once the transaction has committed. `null` (no promise) where the page has no IndexedDB.
 */
function tx(mode, f) {
  const idb = globalThis.indexedDB;
  if (!idb) return null;
  if (!db) {
    db = new Promise((ok, fail) => {
      setTimeout(() => fail(new DOMException("IndexedDB did not open in 5 s", "TimeoutError")), 5e3);
      const r = idb.open("idemkey", 1);
      r.onupgradeneeded = () => r.result.createObjectStore("records");
      r.onsuccess = () => {
        const b = r.result;
        b.onclose = () => {
          db = null;
        };
        b.onversionchange = () => {
          b.close();
          db = null;
        };
        ok(b);
      };
      r.onerror = () => fail(r.error);
    });
    db.catch(() => {
      db = null;
    });
  }
  return db
    .then((b) => new Promise((ok, fail) => {
      const x = b.transaction("records", mode);
      const q = f(x.objectStore("records"));
      if (mode == "readonly") q.onsuccess = () => ok(q.result);
      x.oncomplete = () => ok(q.result);
      x.onabort = () => fail(x.error || q.error);
    }))
    .catch((e) => {
      db = null;
      throw e;
    });
}

/** The text stored under `key` (`undefined` when none). */
export function idbGet(key) {
  return tx("readonly", (s) => s.get(key));
}

/** Stores `value` under `key`, or deletes `key` when `value` is null. */
export function idbSet(key, value) {
  return tx("readwrite", (s) => (value == null ? s.delete(key) : s.put(value, key)));
}

/** Deletes, in one transaction, the entries under `prefix` for which `due(key, text)`. */
export function idbSweep(prefix, due) {
  return tx("readwrite", (s) => {
    const q = s.openCursor(IDBKeyRange.bound(prefix, prefix + "\uffff"));
    q.onsuccess = () => {
      const c = q.result;
      if (c) {
        if (typeof c.key == "string" && typeof c.value == "string" && due(c.key, c.value)) c.delete();
        c.continue();
      }
    };
    return q;
  });
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
