// The chaos plan: for each checkout, the user's move, the faults the server will
// inject for that customer, and the order's quantities; for the run, when the
// server is killed. All of it follows from the seed alone; only timing does not.
import { rng } from './rng.mjs';

/** The user's moves and how often each is drawn. */
export const MOVE_WEIGHTS = {
  single: 2,          // one click on Pay
  double: 2,          // two clicks 0-150 ms apart, or the demo's "Double-click Pay"
  reload: 2,          // Pay, then reload while the request is out, then Pay again
  tab: 4,             // a second tab on the same order pays 0-100 ms after the first
  'reset-race': 1,    // another tab abandons the key (reset()) while the first pays
  'finish-race': 1,   // another tab starts a new order (finish()) while the first pays
  // Pay in a second tab on the same order while the first tab's request is on the wire;
  // the tab answered first starts a new order (finish()) on its receipt route at once.
  'tab-receipt': 2,
};

// The demo's products (their SKUs and the quantities a new order starts with); the
// plan always picks other quantities, so a checkout's first order and a new order
// started by a finish race have different totals and their charges can be told apart.
export const PRODUCTS = [
  { sku: 'yirgacheffe-250', start: 1, max: 3 },
  { sku: 'gooseneck-kettle', start: 1, max: 2 },
  { sku: 'filters-100', start: 2, max: 4 },
];
export const GOOD_CARD = '4242424242424242';

/** Every fault mode of the fault API that a checkout must survive, as a scheduling body. */
const FAULTS = {
  'drop-after-commit': () => ({ mode: 'drop-after-commit' }),
  'error-after-commit': () => ({ mode: 'error-after-commit' }),
  'fail-before-commit': () => ({ mode: 'fail-before-commit' }),
  // 4000 ms outlasts the demo's 3 s per-try timeout: the try times out after the commit.
  'delay-after-commit': (r) => ({ mode: 'delay-after-commit', delay_ms: r.pick([150, 1000, 4000]) }),
  'drop-before-commit': () => ({ mode: 'drop-before-commit' }),
  'respond-503': (r) => ({ mode: 'respond', status: 503, retry_after: r.pick(['0', '1', '2']) }),
  // retry_after_in_ms becomes an HTTP date that far ahead when the fault is scheduled.
  'respond-429': (r) => (r.chance(0.5)
    ? { mode: 'respond', status: 429, retry_after: '1' }
    : { mode: 'respond', status: 429, retry_after_in_ms: r.int(1000, 2500) }),
  'respond-5xx': (r) => ({ mode: 'respond', status: r.pick([500, 502, 504]), body: 'chaos' }),
  'respond-408': () => ({ mode: 'respond', status: 408 }),
};
export const FAULT_NAMES = Object.keys(FAULTS);

function faultsFor(r) {
  const n = r.int(0, 3);
  const out = [];
  for (let i = 0; i < n; i += 1) out.push({ ...FAULTS[r.pick(FAULT_NAMES)](r), count: 1 });
  // Which instance of a cluster holds it (faults live in the instance asked for them).
  for (const f of out) f.instance = r.int(0, 2);
  // Now and then every try of the first Pay fails (six tries: the first and five
  // retries), so it ends outcome-unknown and the user has to press Pay again.
  if (n > 0 && r.chance(0.15)) out[0] = { ...FAULTS[r.pick(['fail-before-commit', 'respond-503', 'drop-before-commit'])](r), count: 6, instance: out[0].instance };
  return out;
}

// Faults of the receipt worker (taken by its deliveries, skipped by requests): now and
// then a delivery fails before the receipt, or the worker dies after the receipt and
// before its ack, so the event comes again and the consumer must not send it twice.
const WORKER_FAULTS = ['worker-fail-before-receipt', 'worker-crash-before-ack'];

function workerFaultsFor(r) {
  return r.chance(0.15) ? [{ mode: r.pick(WORKER_FAULTS), count: 1, instance: r.int(0, 2) }] : [];
}

function quantities(r) {
  for (;;) {
    const qty = Object.fromEntries(PRODUCTS.map((p) => [p.sku, r.int(1, p.max)]));
    if (PRODUCTS.some((p) => qty[p.sku] !== p.start)) return qty;
  }
}

function moveParams(move, r) {
  switch (move) {
    case 'double': return { gapMs: r.int(0, 150), demoButton: r.chance(0.3) };
    case 'reload': return { afterMs: r.int(0, 400), demoButton: r.chance(0.3) };
    // together: both tabs load at once (the second starts staggerMs later) and each
    // pays as soon as it can; window-open: the demo's "Open a second tab" button.
    case 'tab': return { together: r.chance(0.8), staggerMs: r.int(0, 40), lagMs: r.int(0, 100) };
    case 'reset-race':
    case 'finish-race':
    case 'tab-receipt': return { lagMs: r.int(0, 100) };
    default: return {};
  }
}

/** The plan of checkout `index` (0-based) under `seed`; with `only`, every move is that one. */
export function planCheckout(seed, index, runId, only = null) {
  const r = rng(`${seed}:${index}`);
  const drawn = r.weighted(MOVE_WEIGHTS);
  const move = only || drawn;
  return {
    index,
    customer: `chaos-${runId}-${index}`,
    move,
    params: moveParams(move, r),
    faults: faultsFor(r),
    workerFaults: workerFaultsFor(r),
    qty: quantities(r),
    // Once paid, the user presses Pay once more: nothing may be sent or charged.
    payAgainAfterPaid: r.chance(0.2),
  };
}

/**
 * The run's kill -9 restarts: `count` of them, spread over the run; each fires
 * `delayMs` after checkout `at` sends its first Pay, so requests are in flight.
 */
export function planRestarts(seed, checkouts, count = 2) {
  const r = rng(`${seed}:restarts`);
  const out = [];
  for (let i = 1; i <= count; i += 1) {
    const span = checkouts / (count + 1);
    const at = Math.min(checkouts - 1, Math.max(0, Math.floor(i * span + r.int(0, Math.max(0, Math.floor(span / 4))))));
    out.push({ at, delayMs: r.int(0, 300) });
  }
  return out;
}

/** The body to POST to /api/faults for one planned fault (dates made absolute now). */
export function faultBody(f) {
  const { retry_after_in_ms: inMs, instance, ...body } = f;
  if (inMs !== undefined) body.retry_after = new Date(Date.now() + inMs).toUTCString();
  return body;
}
