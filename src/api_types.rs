//! The TypeScript declarations of the JavaScript surface that wasm-bindgen cannot write from
//! the Rust signatures: the option, result, error and event types, and the `Checkout`'s
//! getters (src/browser/getters.js defines them). Part of `api`, in a file of its own.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/**
 * Where a checkout attempt stands: `"fresh"` (nothing sent under its key yet), `"pending"`
 * (sent; the outcome is not known yet, or was not when the last submit gave up),
 * `"succeeded"` (a 2xx answer is stored) or `"failed"` (a final non-2xx answer is stored;
 * the next submit starts a new attempt with a new key).
 */
export type CheckoutState = "fresh" | "pending" | "succeeded" | "failed";
/**
 * Where a record lives: `"local"` (IndexedDB with a copy in localStorage, shared by every
 * tab of the origin), `"session"` (this tab, across its refreshes) or `"memory"` (this page).
 */
export type StorageKind = "local" | "session" | "memory";
/**
 * The `code` of an {@link IdemError}: `invalid-options` (from `Checkout.open`),
 * `payload-conflict`, `outcome-unknown` and `invalid-payload` (from `submit`),
 * `wasm-blocked` and `wasm-integrity` (from `init`), `freed` (a freed `Checkout` used).
 */
export type IdemErrorCode = "invalid-options" | "payload-conflict" | "outcome-unknown" | "invalid-payload"
  | "wasm-blocked" | "wasm-integrity" | "freed";
/**
 * What `Checkout.open` throws, `init` and `submit` reject with, and a freed `Checkout`
 * throws: an `Error` told apart by its `name`, with a `code`.
 * @example
 * catch (err) { if (err.name === "IdemError" && err.code === "outcome-unknown") showPressAgain(); }
 */
export interface IdemError extends Error {
  /** Always `"IdemError"`. */
  name: "IdemError";
  /**
   * What went wrong. `outcome-unknown`: the payment may or may not have happened and the
   * key is kept, so tell the customer to press Pay again (never `reset()` then).
   */
  code: IdemErrorCode;
  /** With `outcome-unknown`: why. The last try's failure (`timeout`, `network-error`,
   * `status-503`, ...); `abandoned` when `reset()`, `finish()` or another tab moved the scope
   * to a new key; `another-tab` when another tab held the checkout for the whole
   * `deadlineMs` and nothing was sent from this one; `deadline` when the browser ran the
   * first try so late (a frozen tab thawed) that the budget was over, and it was not sent.
   * @example if (e.code === "outcome-unknown" && e.reason === "another-tab") showOpenElsewhere(); */
  reason?: string;
}
/**
 * Options of `Checkout.open`; only `scope` and `endpoint` are required. A missing, unknown
 * or out-of-range option throws the `invalid-options` IdemError naming it.
 * @example
 * Checkout.open({ scope: `cart-${cart.id}`, endpoint: "/api/charges" })
 */
export interface CheckoutOptions {
  /**
   * The logical checkout, 1 to 200 characters: one record and one key at a time. Give
   * each order its own (a cart id, an order draft id).
   * @example scope: `cart-${cart.id}`
   */
  scope: string;
  /** Where `submit()` sends, e.g. `"/api/charges"`; another origin must allow it by CORS. */
  endpoint: string;
  /** The HTTP method. Default `"POST"`. */
  method?: "POST" | "PUT" | "PATCH" | "DELETE";
  /**
   * Extra request headers, not the key's own; `Content-Type: application/json` is sent
   * unless set here. Default `{}`.
   * @example headers: { Authorization: `Bearer ${token}` }
   */
  headers?: Record<string, string>;
  /** The key's header, an HTTP token. Default `"Idempotency-Key"`; e.g. `"PayPal-Request-Id"`. */
  headerName?: string;
  /**
   * `"plain"` sends the bare key (Stripe style, the default); `"sf-string"` quotes it as a
   * structured-field string (the IETF draft).
   */
  headerFormat?: "plain" | "sf-string";
  /** A key older than this many seconds is never reused: 1 to 31536000, default 86400 (24 h). */
  ttlSeconds?: number;
  /**
   * Each try's timeout in ms, 1 to 600000, default 10000. A timed-out try is an unknown
   * outcome, retried with the same key.
   */
  timeoutMs?: number;
  /** Tries after the first, 0 to 100. Default 5. */
  maxRetries?: number;
  /**
   * Exponential backoff with full jitter: a random wait up to `min(maxMs, baseMs * 2^n)`;
   * a server's `Retry-After` replaces it. Integers 0 to 3600000, `baseMs <= maxMs`.
   * Default `{ baseMs: 250, maxMs: 10000 }`.
   */
  backoff?: { /** The first retry's longest wait, ms. */ baseMs?: number; /** No wait is longer, ms. */ maxMs?: number };
  /**
   * One `submit()`'s budget for its tries and waits, in ms from its first try: 1 to
   * 86400000, default 60000. When it is used up, `submit()` rejects with `outcome-unknown`.
   */
  deadlineMs?: number;
  /**
   * Where the record lives. Default `"local"`, shared by every tab; storage that throws
   * falls back local -> session -> memory, with a `storage-fallback` event.
   */
  storage?: StorageKind;
  /** Storage keys start with `${namespace}:`: 1 to 64 characters, no `:`. Default `"idemkey"`. */
  namespace?: string;
  /** As `fetch`'s `credentials`. Default `"same-origin"`. */
  credentials?: "omit" | "same-origin" | "include";
  /**
   * Called for every event of the attempt; what it throws is logged, never rethrown.
   * @example onEvent: (e) => console.debug("idemkey", e.type, e.key)
   */
  onEvent?: (event: IdemEvent) => void;
}
/**
 * What a {@link Checkout} shows of its attempt, at every moment: the same in every
 * `Checkout` of the scope in the page.
 */
export interface Checkout {
  /**
   * This attempt's idempotency key (UUID v4), the one every try sends, kept until
   * `finish()`, `reset()`, a final failure or `ttlSeconds`.
   */
  readonly key: string;
  /** The scope this checkout was opened for. */
  readonly scope: string;
  /** "fresh", "pending", "succeeded" or "failed"; follows other tabs too (`state` events). */
  readonly state: CheckoutState;
  /** HTTP tries sent for this key so far (persisted). */
  readonly attempts: number;
  /** When this key was made, in ms since the epoch. */
  readonly createdAt: number;
  /** When this key stops being reused, in ms since the epoch. */
  readonly expiresAt: number;
  /** Where this tab's copy of the record is (after any fallback): "local", "session", "memory". */
  readonly storage: StorageKind;
}
/**
 * What `submit()` resolves with: the final HTTP answer, 2xx or not (like `fetch`), or the
 * stored one.
 * @example
 * const r = await checkout.submit(order); show(r.ok ? "Paid" : `Declined (${r.status})`);
 */
export interface SubmitResult {
  /** The idempotency key this answer belongs to. */
  key: string;
  /** The HTTP status of the final (or stored) answer. */
  status: number;
  /** `status` is 2xx: the attempt is `"succeeded"`. */
  ok: boolean;
  /** The response body: parsed JSON, else the text; null when empty. */
  body: unknown;
  /** The server answered `Idempotent-Replayed: true`: an earlier try had done the work. */
  replayed: boolean;
  /** Resolved from the stored answer (a click after the answer, another tab's answer): nothing sent. */
  fromCache: boolean;
  /** HTTP tries sent for this key so far, by every page and tab. */
  attempts: number;
}
/** Why a try is retried: no answer in `timeoutMs`, no answer at all, or a retryable status (`"status-503"`). */
export type RetryReason = "timeout" | "network-error" | `status-${number}`;
/**
 * Events passed to `onEvent`, told apart by `type`; each carries the attempt's `key`.
 * `attempt`: a try is about to be sent. `retry`: a try failed in a retryable way and the
 * next comes after `delayMs`. `response`: a try got an HTTP answer. `state`: the record's
 * state changed, here or in another tab. `key-changed`: `checkout.key` changed without a
 * `reset()` or `finish()` of this page. `storage-fallback`: storage threw and the record
 * moved down. `storage-reopened`: IndexedDB's lost connection was opened again, nothing
 * lost. `storage-corrupt`: an unreadable record was set aside under `quarantineKey`.
 */
export type IdemEvent =
  | { type: "attempt"; key: string; attempt: number }
  | { type: "retry"; key: string; attempt: number; delayMs: number; reason: RetryReason }
  | { type: "response"; key: string; attempt: number; status: number; replayed: boolean }
  | { type: "state"; key: string; state: CheckoutState; previous: CheckoutState }
  | { type: "key-changed"; key: string; previous: string }
  | { type: "storage-fallback"; key: string; from: StorageKind | "indexeddb"; to: StorageKind; reason: string }
  | { type: "storage-reopened"; key: string; backend: "indexeddb"; reason: string }
  | { type: "storage-corrupt"; key: string; reason: string; quarantineKey: string };
"#;
