// Every public name of the idemkey package, type-checked with `tsc --strict --noEmit`
// by the consumer tests (tests/consumer/types.test.mjs). The TypeScript blocks of
// docs/guide.md and docs/payment-pages.md are regions of this file.
import init, {
  Checkout,
  initSync,
  newKey,
  type CheckoutOptions,
  type CheckoutState,
  type IdemError,
  type IdemErrorCode,
  type IdemEvent,
  type InitOptions,
  type StorageKind,
  type SubmitResult,
} from "idemkey";

await init(); // or initSync({ module: bytes }) where the wasm bytes are at hand
const syncInit: typeof initSync = initSync;
// On a payment page init() hashes the wasm and compiles it only if it matches (type-checked
// only: the value is a placeholder).
// #region integrity
await init({ integrity: "sha384-…" }); // integrity.json["idemkey_bg.wasm"]
// #endregion integrity
const pinned: InitOptions = { module_or_path: "/js/idemkey_bg.wasm", integrity: "sha384-…" };

// #region options
const options: CheckoutOptions = {
  scope: "cart-42",                        // required: the logical checkout
  endpoint: "/api/charges",                // required: where submit() sends
  method: "POST",                          // POST | PUT | PATCH | DELETE
  headers: { Authorization: "Bearer tok_123" },
  headerName: "Idempotency-Key",           // e.g. "PayPal-Request-Id"
  headerFormat: "plain",                   // or "sf-string" (IETF draft: quoted)
  ttlSeconds: 86400,                       // a key older than this is never reused
  timeoutMs: 10000,                        // per try
  maxRetries: 5,                           // tries after the first
  backoff: { baseMs: 250, maxMs: 10000 },  // exponential, full jitter
  deadlineMs: 60000,                       // whole submit() budget
  storage: "local",                        // "local" | "session" | "memory"
  namespace: "idemkey",                    // storage keys start with "idemkey:"
  credentials: "same-origin",              // as fetch's
  onEvent: (e: IdemEvent) => log(e),
};
const checkout: Checkout = Checkout.open(options);
// #endregion options

// #region checkout
const key: string = checkout.key;               // UUID v4, kept until finish/reset/expiry
const scope: string = checkout.scope;
const state: CheckoutState = checkout.state;    // "fresh" | "pending" | "succeeded" | "failed"
const attempts: number = checkout.attempts;     // HTTP tries sent with this key (persisted)
const created: number = checkout.createdAt;     // ms since the epoch
const expires: number = checkout.expiresAt;
const where: StorageKind = checkout.storage;    // where this tab's copy is, after any fallback
// #endregion checkout

// #region result
const r: SubmitResult = await checkout.submit({ amount: 4200, currency: "EUR" });
r.key;        // string: the idempotency key sent
r.status;     // number: the final HTTP status
r.ok;         // boolean: status is 2xx
r.body;       // the response body (JSON-parsed when it is JSON)
r.replayed;   // boolean: the server sent `Idempotent-Replayed: true`
r.fromCache;  // boolean: answered from storage, nothing sent
r.attempts;   // number: tries sent for this key
// #endregion result

// #region events
function log(e: IdemEvent): void {
  switch (e.type) {
    case "attempt":          console.log(e.key, "try", e.attempt); break;
    case "retry":            console.log(e.key, "retry in", e.delayMs, "ms after", e.reason); break;
    case "response":         console.log(e.key, e.status, e.replayed ? "(replayed)" : ""); break;
    case "state":            console.log(e.key, e.previous, "->", e.state); break;
    case "key-changed":      console.log(e.previous, "is now", e.key); break;
    case "storage-fallback": console.warn(e.from, "->", e.to, e.reason); break;
    case "storage-reopened": console.info(e.backend, "reopened after", e.reason); break;
    case "storage-corrupt":  console.warn("set aside as", e.quarantineKey, e.reason); break;
    default: { const unhandled: never = e; return unhandled; } // every type is handled
  }
}
// #endregion events

// #region errors
const isIdemError = (err: unknown): err is IdemError =>
  err instanceof Error && err.name === "IdemError";

try {
  await checkout.submit({ amount: 9900, currency: "EUR" }); // a different payload
} catch (err) {
  if (!isIdemError(err)) throw err;
  const code: IdemErrorCode = err.code;
  switch (code) {
    case "invalid-options":  break; // Checkout.open: a bad option, the message names it
    case "payload-conflict": break; // another payload while pending/succeeded: reset() first
    case "outcome-unknown":  break; // retries or deadline used up: the key is kept, submit again
    case "invalid-payload":  break; // the payload is not JSON-serialisable
    case "wasm-blocked":     break; // init(): the page's CSP refuses wasm: add 'wasm-unsafe-eval'
    case "wasm-integrity":   break; // init({ integrity }): the wasm's bytes are not the pinned ones
    case "freed":            break; // this Checkout was freed: Checkout.open() the scope again
  }
}
// #endregion errors

// #region lifecycle
// One record per scope; the key is stored before the first byte is sent.
//
//   fresh --submit(p)--> pending --2xx-----------------> succeeded --finish()--> ended
//     ^                   |  ^                              |
//     |                   |  | retry, same key: network     +- submit(p): stored result, fromCache
//     |                   +--+ error, timeout, 408 409 425  +- submit(q): payload-conflict
//     |                   |    429 500 502 503 504
//     |                   |    retries or deadline used up: outcome-unknown, still
//     |                   |    pending, key kept: submit(p) later resumes with it;
//     |                   |    submit(q) meanwhile: payload-conflict
//     |                   |
//     |                   +--any other status--> failed --submit(any)--> pending, new key
//     |
//     +-- reset() from any state, or ttlSeconds passed: new key
checkout.reset();                 // abandon this attempt on purpose: new key, "fresh"
checkout.finish();                // end the attempt when the page moves on to the next order
const fresh: string = newKey();   // a UUID v4
// #endregion lifecycle

export { key, scope, state, attempts, created, expires, where, fresh, syncInit };
