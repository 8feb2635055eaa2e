// The few browser APIs the module reaches without web-sys (its bindings cost more bytes):
// Web Locks, BroadcastChannel, IndexedDB. One file, so a page fetches one snippet.

// Resolves with the lock's release function once held; null when there is no Web Locks.
export function lockAcquire(name) {
  const locks = globalThis.navigator && navigator.locks;
  if (!locks || typeof locks.request != "function") return null;
  return new Promise((held) => {
    locks.request(name, () => new Promise(held)).catch(() => held(null));
  });
}

// The channel, or null when the page has no BroadcastChannel; `onText` gets string messages.
export function chanOpen(name, onText) {
  if (typeof BroadcastChannel != "function") return null;
  const chan = new BroadcastChannel(name);
  chan.onmessage = (e) => {
    if (typeof e.data == "string") onText(e.data);
  };
  return chan;
}

export function chanPost(chan, text) {
  try {
    chan.postMessage(text);
  } catch (e) {}
}

export function chanClose(chan) {
  chan.close();
}

// The page's connection to database `idemkey`, opened on first use.
let db;

// Runs `request(store)` in one transaction of `mode`; resolves with its result once
// committed. null when the page has no IndexedDB; rejects when it fails or, on open, does
// not answer within 5 s.
function inStore(mode, request) {
  const factory = globalThis.indexedDB;
  if (!factory) return null;
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
      tx.oncomplete = () => ok(req.result);
      tx.onabort = () => fail(tx.error || req.error);
    }))
    .catch((e) => { db = null; throw e; });
}

export function idbGet(key) {
  return inStore("readonly", (s) => s.get(key));
}

// Stores `value` under `key`; null or undefined deletes it.
export function idbSet(key, value) {
  return inStore("readwrite", (s) => (value == null ? s.delete(key) : s.put(value, key)));
}

// Deletes the entries under `prefix` for which `due(key, value)` is true, in one transaction.
export function idbSweep(prefix, due) {
  return inStore("readwrite", (s) => {
    const cursor = s.openCursor(IDBKeyRange.bound(prefix, prefix + "\uffff"));
    cursor.onsuccess = () => {
      const c = cursor.result;
      if (!c) return;
      if (typeof c.key == "string" && typeof c.value == "string" && due(c.key, c.value)) c.delete();
      c.continue();
    };
    return cursor;
  });
}
