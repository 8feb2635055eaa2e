// The page's synchronous Web Storage for the scopes' machines, which read and write it
// through their host (src/browser/host.rs): localStorage, sessionStorage, or the page's
// memory where neither is there; the browser's refusals are thrown as they come. Joined
// into idemkey.js by scripts/post-pack.sh.

// The page's window; null in Node, a worker, anywhere else without one. Found once: every
// read and write of Web Storage asks for it, and the check took as long as the read.
export const page = typeof Window == "function" && globalThis instanceof Window ? globalThis : null;

// The memory backend: one map per page, shared by every scope.
const memory = new Map();

// A backend `kind` is a number, in the order of the core's StorageKind (a number crosses
// from the wasm without a string to decode): 0 localStorage, 1 sessionStorage, 2 the
// page's memory.
const MEMORY = 2;

// The Web Storage object of `kind` (0 local, 1 session): null without a window, undefined
// when the browser gives none; throws what the browser throws when it refuses it.
export function webStorage(kind) {
  const w = page;
  return w && ((kind ? w.sessionStorage : w.localStorage) ?? undefined);
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
  if (kind == MEMORY) return null;
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

// The keys of backend `kind` that start with `prefix`, made before any is removed. Web
// Storage's keys as one array (its named properties), which a listing of every entry of the
// origin's storage takes less time to get than a `key(i)` call per entry (in Chromium, 140
// entries: 41 to 49 µs against 58 to 94).
export function storageKeys(kind, prefix) {
  try {
    const s = area(kind);
    return (s ? Object.keys(s) : [...memory.keys()]).filter((k) => k.startsWith(prefix));
  } catch {
    return [];
  }
}
