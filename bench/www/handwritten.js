// The baselines of the client table in `make bench`: a checkout page's own idempotency, as a
// careful developer would write it in plain JavaScript with no library. One IndexedDB
// connection, opened once when the page loads; a Web Lock per scope; crypto.randomUUID().
// It does the work idemkey must do before and after a charge, and nothing slower than it
// needs: the record is read and the pending key stored in one readwrite transaction,
// committed before the request goes out; the answer is handed back as soon as its write is
// made, and the lock is held until that write has committed, so the next holder of the
// scope, in any tab, reads the answer.

let db;

/** Opens the page's one connection (its database of its own, `checkout`). */
export function openBaselineDb() {
  return new Promise((ok, fail) => {
    const open = indexedDB.open('checkout', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('attempts');
    open.onsuccess = () => { db = open.result; ok(); };
    open.onerror = () => fail(open.error);
  });
}

/** The scope's record, read once the read succeeds (what it reads is committed). */
function read(scope) {
  return new Promise((ok, fail) => {
    const tx = db.transaction('attempts', 'readonly');
    const req = tx.objectStore('attempts').get(scope);
    req.onsuccess = () => ok(req.result);
    tx.onabort = () => fail(tx.error);
  });
}

/** Stores `record` for `scope`; resolves once committed. */
function write(scope, record) {
  return new Promise((ok, fail) => {
    const tx = db.transaction('attempts', 'readwrite');
    tx.objectStore('attempts').put(record, scope);
    tx.oncomplete = () => ok();
    tx.onabort = () => fail(tx.error);
  });
}

/**
 * The scope's pending attempt: the stored one if there is one, or a new key, stored and
 * committed in the same readwrite transaction that read it. Resolves once committed.
 */
function pendingAttempt(scope) {
  return new Promise((ok, fail) => {
    const tx = db.transaction('attempts', 'readwrite');
    const store = tx.objectStore('attempts');
    const req = store.get(scope);
    let record;
    req.onsuccess = () => {
      record = req.result;
      if (!record) {
        record = { key: crypto.randomUUID(), state: 'pending', createdAt: Date.now() };
        store.put(record, scope);
      }
    };
    tx.oncomplete = () => ok(record);
    tx.onabort = () => fail(tx.error);
  });
}

/**
 * One checkout of `payload` for `scope`: resolves with `{ key, status, body }`, the stored
 * answer when there is one, or the answer of one POST to `endpoint` sent with the scope's key.
 */
export function handWrittenCheckout(scope, endpoint, headers, payload) {
  return new Promise((answered, failed) => {
    navigator.locks.request(`checkout:${scope}`, async () => {
      const record = await pendingAttempt(scope);
      if (record.state !== 'pending') return answered(record); // a final answer is stored
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': record.key, ...headers },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(10_000),
      });
      const body = await res.json();
      const done = { ...record, state: res.ok ? 'succeeded' : 'failed', status: res.status, body };
      const committed = write(scope, done);
      answered(done);
      await committed;
    }).catch(failed);
  });
}

/** Stores `answer` (its key, status and body) as the scope's succeeded attempt. */
export function storeAnswer(scope, { key, status, body }) {
  return write(scope, { key, state: 'succeeded', createdAt: Date.now(), status, body });
}

/** The scope's record read without the lock (resolves once the read succeeds). */
export const readAlone = read;

/** A submit whose answer is stored, the careful way: the scope's lock, then the read. */
export function carefulCachedRead(scope) {
  return navigator.locks.request(`checkout:${scope}`, () => read(scope));
}
