// The test pages' own JS: one file, so a page fetches one snippet for it (the test
// runner's server hangs a page that opens more than four connections at once).
// It also brings the module under test: the package as `make build` wrote it to pkg/, which
// the test runner serves from the crate's directory; init() at the bottom loads the wasm
// from beside idemkey.js, as a user's page does. tests/support/shipped.rs binds its exports.
import init, { Checkout, newKey } from "/pkg/idemkey.js";
export { Checkout, newKey };
export function recorder() {
  const f = (e) => { f.events.push(e); f.times.push(Date.now()); };
  f.events = []; f.times = [];
  return f;
}
export function thrower() { return () => { throw new Error("onEvent boom"); }; }
export function breakStorage(all) {
  const orig = Storage.prototype.setItem;
  Storage.prototype.setItem = function (k, v) {
    if (all || this === localStorage) throw new DOMException("test quota", "QuotaExceededError");
    return orig.call(this, k, v);
  };
  return () => { Storage.prototype.setItem = orig; };
}
export function hideLocks() { return hideLocksIn(window); }
export function hideLocksIn(w) {
  const nav = w.navigator;
  Object.defineProperty(nav, "locks", { value: undefined, configurable: true });
  return () => { delete nav.locks; };
}
// What Safari 15.0 to 15.3 lacks of what the module uses (the browser table of
// docs/tabs-and-storage.md): Web Locks, BroadcastChannel and Object.hasOwn, removed from the
// window `w`; returns the restore.
export function hideSafari15In(w) {
  const undoLocks = hideLocksIn(w);
  const { BroadcastChannel, Object: { hasOwn } } = w;
  delete w.BroadcastChannel;
  delete w.Object.hasOwn;
  return () => {
    undoLocks();
    w.BroadcastChannel = BroadcastChannel;
    w.Object.hasOwn = hasOwn;
  };
}
export function spyFetch(watch) {
  const orig = globalThis.fetch;
  const seen = [];
  globalThis.fetch = function (input, init) {
    // What fetch sends: the Request it makes of its arguments.
    const req = new Request(input, init);
    seen.push({ url: req.url, key: req.headers.get("idempotency-key"),
      custom: req.headers.get("paypal-request-id"), method: req.method,
      contentType: req.headers.get("content-type"), authorization: req.headers.get("authorization"),
      credentials: req.credentials, stored: watch ? localStorage.getItem(watch) : null });
    return orig.call(this, input, init);
  };
  const restore = () => { globalThis.fetch = orig; };
  restore.seen = seen;
  return restore;
}
// The tests' own calls to the server go around spyFetch: only the module's are the page's.
const testFetch = globalThis.fetch;
export async function api(url, method, customer, body) {
  const r = await testFetch(url, { method, headers: { "x-customer-id": customer, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const t = await r.text();
  if (!r.ok) throw new Error("test api " + method + " " + url + ": " + r.status + " " + t);
  return t ? JSON.parse(t) : null;
}
export function holdLock(name) { return holdLockIn(window, name); }
// The Web Lock `name` taken in the window `w` (another tab's): resolves, once held, with the
// function that releases it.
export function holdLockIn(w, name) {
  return new Promise((held) => {
    w.navigator.locks.request(name, () => new w.Promise((release) => held(release)));
  });
}
// Makes garbage every 20 ms, as a busy page does, so that the collector runs while a request
// is on its way; returns the function that stops it.
export function churnGarbage() {
  let kept = [];
  const t = setInterval(() => {
    kept = [];
    for (let i = 0; i < 20000; i++) kept.push({ i, s: "x" + i });
  }, 20);
  return () => clearInterval(t);
}
export function within(p, ms) {
  return Promise.race([p.then((v) => [v]), new Promise((ok) => setTimeout(() => ok(null), ms))]);
}
export function fireStorage(key, newValue, oldValue) {
  window.dispatchEvent(new StorageEvent("storage", { key, newValue, oldValue, storageArea: localStorage }));
}

export function hideIndexedDb(w) {
  w = w || window;
  // A global's attributes live on the window itself: keep the real one to put it back.
  const real = Object.getOwnPropertyDescriptor(w, "indexedDB");
  Object.defineProperty(w, "indexedDB", { value: undefined, configurable: true });
  return () => { if (real) Object.defineProperty(w, "indexedDB", real); else delete w.indexedDB; };
}
export function breakIndexedDb(w) {
  const proto = (w || window).IDBDatabase.prototype;
  const orig = proto.transaction;
  proto.transaction = function () { throw new DOMException("test: no transactions", "UnknownError"); };
  return () => { proto.transaction = orig; };
}
export function idbPut(key, value) {
  return new Promise((ok, no) => {
    const r = indexedDB.open("idemkey", 1);
    r.onupgradeneeded = () => r.result.createObjectStore("records");
    r.onerror = () => no(r.error);
    r.onsuccess = () => {
      const db = r.result, t = db.transaction("records", "readwrite");
      t.objectStore("records").put(value, key);
      t.oncomplete = () => { db.close(); ok(); };
      t.onabort = () => no(t.error);
    };
  });
}
export function idbDelete(key) {
  return new Promise((ok, no) => {
    const r = indexedDB.open("idemkey", 1);
    r.onupgradeneeded = () => r.result.createObjectStore("records");
    r.onerror = () => no(r.error);
    r.onsuccess = () => {
      const db = r.result, t = db.transaction("records", "readwrite");
      t.objectStore("records").delete(key);
      t.oncomplete = () => { db.close(); ok(); };
      t.onabort = () => no(t.error);
    };
  });
}
export function idbGet(key) {
  return new Promise((ok, no) => {
    const r = indexedDB.open("idemkey", 1);
    r.onupgradeneeded = () => r.result.createObjectStore("records");
    r.onerror = () => no(r.error);
    r.onsuccess = () => {
      const db = r.result, q = db.transaction("records").objectStore("records").get(key);
      q.onsuccess = () => { db.close(); ok(q.result === undefined ? null : q.result); };
      q.onerror = () => no(q.error);
    };
  });
}
export async function openTab() {
  const f = document.createElement("iframe");
  document.body.appendChild(f);
  const w = f.contentWindow;
  // The frame's own instance of the shipped module, as another tab of the shop would load it.
  const m = await w.eval('import("/pkg/idemkey.js")');
  await m.default();
  if (typeof m.Checkout !== "function") throw new Error("pkg/idemkey.js exports no Checkout");
  return { frame: f, window: w, module: m };
}
export function tabOpen(tab, options) { return tab.module.Checkout.open(tab.window.structuredClone(options)); }
export function tabOpenRecorded(tab, options, rec) {
  const o = tab.window.structuredClone(options);
  o.onEvent = rec;
  return tab.module.Checkout.open(o);
}
export function tabSubmit(c, payload) {
  return c.submit(payload).then(
    (r) => ({ ok: r.ok, status: r.status, key: r.key, fromCache: r.fromCache, replayed: r.replayed, attempts: r.attempts, body: r.body }),
    (e) => ({ error: e.code, message: e.message }));
}
export function tabClose(tab) { tab.frame.remove(); }
export function tabFinish(c) { return c.finish(); }
export function listenChannel(name) {
  const c = new BroadcastChannel("idemkey");
  c.seen = [];
  c.onmessage = (e) => {
    if (Array.isArray(e.data) && e.data[0] === name) c.seen.push(e.data[1]);
  };
  return c;
}

// Storage broken on purpose (tests/web/broken_storage.rs): each patch overrides methods of the
// browser's own Storage and IndexedDB objects; repair() puts the real ones back.
const SP = Storage.prototype;
const realStorage = {};
for (const m of ["getItem", "setItem", "removeItem", "key", "clear"]) realStorage[m] = SP[m];
const savedLength = Object.getOwnPropertyDescriptor(SP, "length");
const savedAreas = {};
for (const a of ["localStorage", "sessionStorage"]) {
  savedAreas[a] = Object.getOwnPropertyDescriptor(window, a) || null;
}
const failWith = (name) => () => { throw new DOMException("test: " + name, name); };
const IF = IDBFactory.prototype, ID = IDBDatabase.prototype, IS = IDBObjectStore.prototype;
// Every connection to database "idemkey" opened in this page, the module's among them, so a
// test can close them under it as a browser does when it loses its IndexedDB server.
const idbConnections = [];
const rawIdbOpen = IF.open;
IF.open = function (name, ...rest) {
  const req = rawIdbOpen.call(this, name, ...rest);
  if (name === "idemkey") req.addEventListener("success", () => idbConnections.push(req.result));
  return req;
};
const realIdb = { open: IF.open, transaction: ID.transaction, put: IS.put };
const realIdbArea = Object.getOwnPropertyDescriptor(window, "indexedDB");

export function repair() {
  IF.open = realIdb.open; ID.transaction = realIdb.transaction; IS.put = realIdb.put;
  if (realIdbArea) Object.defineProperty(window, "indexedDB", realIdbArea);
  else delete window.indexedDB;
  Object.assign(SP, realStorage);
  Object.defineProperty(SP, "length", savedLength);
  for (const a of Object.keys(savedAreas)) {
    if (savedAreas[a]) redefine(a, savedAreas[a]);
  }
}
// Replaces the window's accessor `name`, deleting it first: WebKit keeps serving the old
// accessor to code that already read the property (the module's compiled storage access)
// when defineProperty swaps one accessor for another, and only a property deleted and
// defined anew reaches it there.
function redefine(name, descriptor) {
  delete window[name];
  Object.defineProperty(window, name, descriptor);
}
export function denyAccess() {
  for (const a of ["localStorage", "sessionStorage"]) {
    redefine(a, { get: failWith("SecurityError"), configurable: true, enumerable: true });
  }
}
export function throwOnEveryCall() {
  for (const m of Object.keys(realStorage)) SP[m] = failWith("SecurityError");
  Object.defineProperty(SP, "length", { get: failWith("SecurityError"), configurable: true });
}
// These two take the window of another page (a tab's frame) too, whose own Storage they
// patch; a frame's patches go with the frame.
export function throwOnWrites(w) {
  (w ? w.Storage.prototype : SP).setItem = failWith("QuotaExceededError");
}
export function throwOnLocalReads(w) {
  const proto = w ? w.Storage.prototype : SP;
  const read = w ? proto.getItem : realStorage.getItem;
  const local = (w || window).localStorage;
  proto.getItem = function (k) {
    if (this === local) throw new DOMException("test: read", "SecurityError");
    return read.call(this, k);
  };
}
export function throwAfterLocalWrites(n) {
  let left = n;
  SP.setItem = function (k, v) {
    if (this === localStorage && left-- <= 0) throw new DOMException("test: quota", "QuotaExceededError");
    return realStorage.setItem.call(this, k, v);
  };
}
export function quotaForLocalValues(max) {
  SP.setItem = function (k, v) {
    if (this === localStorage && String(v).length > max) throw new DOMException("test: quota", "QuotaExceededError");
    return realStorage.setItem.call(this, k, v);
  };
}
export function failIdbOpen() {
  IF.open = () => { throw new DOMException("test: no open", "UnknownError"); };
}
// Closes every open connection to "idemkey": the next request on one throws InvalidStateError.
export function closeIdbConnections() {
  for (const c of idbConnections.splice(0)) c.close();
}
export function quotaOnIdbPut() {
  IS.put = failWith("QuotaExceededError");
}
export function editOnFirstRetry(recorder, storageKey, edit) {
  let done = false;
  return (e) => {
    if (!done && e.type === "retry") {
      done = true;
      const before = realStorage.getItem.call(localStorage, storageKey);
      realStorage.setItem.call(localStorage, storageKey, edit(before));
    }
    recorder(e);
  };
}
// Frees the checkout `c`, then uses it as a page's handler might: `[name, error name, code]`
// for each method and getter; and what `free()` and `Symbol.dispose` once more threw ("").
export function usedAfterFree(c) {
  c.free();
  const uses = {
    key: () => c.key, scope: () => c.scope, state: () => c.state, storage: () => c.storage,
    attempts: () => c.attempts, createdAt: () => c.createdAt, expiresAt: () => c.expiresAt,
    submit: () => c.submit({ amount: 1 }), reset: () => c.reset(), finish: () => c.finish(),
  };
  const used = Object.entries(uses).map(([name, use]) => {
    try {
      use();
      return [name, "no error", ""];
    } catch (e) {
      return [name, e.name, e.code ?? "", e.message];
    }
  });
  let again = "";
  try {
    c.free();
    c[Symbol.dispose]?.();
  } catch (e) {
    again = String(e);
  }
  return { used, again };
}
// Counts the BroadcastChannels the page makes from now on; returns the function that stops
// counting and says how many.
export function countChannels() {
  const Real = globalThis.BroadcastChannel;
  let made = 0;
  globalThis.BroadcastChannel = class extends Real {
    constructor(name) {
      super(name);
      made++;
    }
  };
  return () => {
    globalThis.BroadcastChannel = Real;
    return made;
  };
}
// Submits `payload`, and again as soon as the first submit resolves (in its own reaction,
// before any other code of the page runs); resolves with both results.
export function submitTwice(c, payload) {
  return c.submit(payload).then((first) => c.submit(payload).then((again) => [first, again]));
}
// Counts the Requests the page makes from now on; returns the function that stops counting
// and says how many.
export function countRequests() {
  const Real = globalThis.Request;
  let made = 0;
  globalThis.Request = class extends Real {
    constructor(...a) {
      super(...a);
      made++;
    }
  };
  return () => {
    globalThis.Request = Real;
    return made;
  };
}

// The module under test, initialised once the page's patches above are in place (the
// tests' code runs after this, since the test harness imports this file).
await init();
