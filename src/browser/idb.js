// IndexedDB for the scopes' machines: the page's one connection to database `idemkey`
// (store `records`), the record's reads and writes, each answer fed back to the scope's
// machine (IDB_READ, IDB_WRITTEN), and the sweep, which asks the machine what is due. It
// decides nothing. Joined into idemkey.js by scripts/post-pack.sh.
import { errorText, text } from "./driver.js";

// The inputs `Machine.feed` takes from here, by the number it reads (src/browser/ffi.rs,
// `input`; driver.js has the others), each with what follows it.
const IDB_READ = 2; // (0, text or null, why or null)
const IDB_WRITTEN = 3; // (0, why or null)
const IDB_REOPENED = 4; // (0, why)

// The page's connection to database `idemkey`, opened on first use.
let db;
// Why the connection was lost and opened again, for the request being answered.
let reopened = null;
// The transactions not yet ended; and, while the page is in the back/forward cache, a
// promise of its return.
const live = new Set();
let away = null;

// A page that leaves (a link, a reload, a closed tab, the back/forward cache) ends the
// transactions it still has: one left open would hold up every other page's on the store
// (WebKit keeps a cached page's open). Each is made again on the page's return, as on a
// lost connection; a page that does not return loses only what it had not committed, as
// any page that dies does.
function leave(e) {
  if (e.persisted) away = new Promise((ok) => addEventListener("pageshow", () => ok(away = null), { once: true }));
  for (const tx of live) {
    tx.left = true;
    try { tx.abort(); } catch {}
  }
}

// Runs `request(store)` in one transaction of `mode`; resolves with its result: a write's
// once the transaction has committed, or, with `early`, a read's as soon as the request
// succeeds (what it read is the committed state; the transaction stays open for a write
// made while that answer is fed: a cursor's, which succeeds once per step, is not early).
// Rejects when the page has no IndexedDB, when it fails or, on open, does not answer
// within 5 s. A connection the browser closed or lost under the page (WebKit: "Connection
// to Indexed Database server lost"; a closed one throws InvalidStateError) is opened again
// and the request made once more.
function inStore(mode, request, early) {
  const factory = globalThis.indexedDB;
  if (!factory) return Promise.reject(new Error("IndexedDB unavailable"));
  const go = () => once(factory, mode, request, early);
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

function once(factory, mode, request, early) {
  if (away) return away.then(() => once(factory, mode, request, early));
  if (!db) {
    if (!leave.on) addEventListener("pagehide", (leave.on = leave));
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
      live.add(tx);
      const req = request(tx.objectStore("records"));
      if (early) req.onsuccess = () => ok(req.result);
      ends(tx, req, () => ok(req.result), fail);
    }))
    .catch((e) => { db = null; throw e; });
}

// `ok()` once transaction `tx` (of request `req`) commits, `fail(why)` if it aborts; one the
// page's leaving aborted fails as a closed connection does, to be made again on its return.
function ends(tx, req, ok, fail) {
  tx.oncomplete = () => { live.delete(tx); ok(); };
  tx.onabort = () => {
    live.delete(tx);
    fail(tx.left ? new DOMException("the page left", "InvalidStateError") : tx.error || req.error);
  };
}

// Feeds the scope's machine a request's outcome: IDB_REOPENED (why) first when the connection had to be
// opened again, then `ok(value)` or `fail(why)`.
function answer(d, p, ok, fail) {
  p.then(
    (v) => {
      const r = reopened;
      reopened = null;
      if (r) d.m?.feed(IDB_REOPENED, 0, r);
      ok(v);
    },
    (e) => fail(errorText(e)),
  );
}

// Reads `key`: IDB_READ with the text or null, or with null and why. The read is
// made in a readwrite transaction, which stays
// active while the machine answers it in the same pass of microtasks (src/browser/live.rs
// feeds an answer and runs the commands it gives in one call): `d.tx` is that transaction
// while the answer is fed, and only then. A write the machine asks for in its answer goes
// into it: the write a submit makes once it has read (its pending key), one commit where
// two transactions would make two. With `alone`, a read made without the lock, which no
// write follows: in a readonly transaction, which holds up no other tab's (a write asked
// for in its answer could not go into it, and takes a transaction of its own).
export function idbGet(d, key, alone) {
  let tx;
  const read = (v, e) => d.m?.feed(IDB_READ, 0, v, e);
  const fed = (v) => {
    d.tx = tx;
    try {
      read(text(v) ?? null, null);
    } finally {
      d.tx = null;
    }
  };
  const get = (s) => ((tx = s.transaction), s.get(key));
  answer(d, inStore(alone ? "readonly" : "readwrite", get, true), fed, (e) => read(null, e));
}

// Stores `value` under `key` (null deletes it): IDB_WRITTEN with null once committed, or
// with why. In the transaction of the read being answered, while that one is
// active; else in a transaction of its own.
export function idbPut(d, key, value) {
  const put = (s) => (value == null ? s.delete(key) : s.put(value, key));
  const own = () => inStore("readwrite", put);
  const tx = d.tx;
  d.tx = null;
  let p;
  if (tx) {
    try {
      const req = put(tx.objectStore("records"));
      // A write whose shared transaction the browser aborted with the connection is made
      // again on a new one, as `inStore` does; the lock is still held.
      p = orAgain(new Promise((ok, fail) => ends(tx, req, ok, fail)), own);
    } catch {}
  }
  // No read's transaction, or one no longer active.
  p ??= own();
  const done = (e) => d.m?.feed(IDB_WRITTEN, 0, e);
  answer(d, p, () => done(null), done);
}

// Deletes the entries under `prefix` that the scope's machine says are due
// (`Machine.due(key, value)`), deciding inside the deleting transaction. A read-only scan
// goes first: a readwrite transaction holds up every other reader and writer of the store
// (a submit's among them), and most sweeps find nothing to delete. Errors are ignored, and
// a scope let go meanwhile deletes nothing: what is not swept now is swept by a later page.
export async function idbSweep(d, prefix) {
  let found = false;
  const scan = (remove) => (s) => {
    const cursor = s.openCursor(IDBKeyRange.bound(prefix, prefix + "\uffff"));
    cursor.onsuccess = () => {
      const c = cursor.result;
      if (!c) return;
      if (typeof c.key == "string" && typeof c.value == "string" && d.m?.due(c.key, c.value)) {
        found = true;
        if (remove) c.delete();
      }
      c.continue();
    };
    return cursor;
  };
  try {
    await inStore("readonly", scan(false));
    if (found) await inStore("readwrite", scan(true));
  } catch {}
}
