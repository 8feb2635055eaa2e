// Kettle & Bean: the idemkey demo checkout. Plain ES module, no build step
// (the wasm-bindgen "without a bundler" pattern): the reference server serves
// this directory at / and the wasm-pack output at /pkg/.
import init, { Checkout, newKey } from '/pkg/idemkey.js';
import { $, shortKey, relTime, store, session, setOutcome, setBusy } from './ui.js';
import { openLedger } from './ledger.js';
import { openNaive } from './naive.js';
import { openTimeline } from './timeline.js';
import { explain } from './explain.js';
import { openFaults } from './faults.js';
import { openCart } from './cart.js';
import { openMailer } from './mailer.js';

const NS = 'idemkey-demo';
const TIMEOUT_MS = 3000;          // per try; the "slow answer" fault outlasts it
const SLOW_MS = 6000;
// ---------------------------------------------------------------- boot
try {
  await init();
} catch (err) {
  const box = $('#boot-error');
  box.textContent = 'The idemkey module did not load (' + (err && err.message) + '). Build it with `make build` and serve pkg/ at /pkg/.';
  box.hidden = false;
  throw err;
}

const params = new URLSearchParams(location.search);
const validId = (s) => (s && /^[A-Za-z0-9_.-]{1,64}$/.test(s) ? s : null);
// One customer per browser profile (reload and a second tab share it); ?customer= overrides for tests.
const customer = validId(params.get('customer')) || store.getOrCreate(`${NS}:customer`, () => 'cus_' + newKey().replace(/-/g, '').slice(0, 12));
const cartSlot = `${NS}:cart:${customer}`;
const newCartId = () => 'ord_' + newKey().replace(/-/g, '').slice(0, 10);
let cart = store.getOrCreate(cartSlot, newCartId);

let checkout = null;
let generation = 0;
let run = null;            // the payment in flight in this tab (clicks while it runs join it)
let reloadOnAttempt = false;
let lastState = null;

$('#customer-id').textContent = customer;
$('#slow-seconds').textContent = String(SLOW_MS / 1000);
$('#timeout-seconds').textContent = String(TIMEOUT_MS / 1000);

const api = (path, init = {}) => fetch(path, { ...init, cache: 'no-store', headers: { 'X-Customer-Id': customer, ...(init.headers || {}) } });
const ledger = openLedger({ api, orderKeys: () => keysOfOrder() });
const timeline = openTimeline({ timeoutMs: TIMEOUT_MS });
const faults = openFaults({ api, slowMs: SLOW_MS });
const mailer = openMailer({ ledger, timeline });

// ---------------------------------------------------------------- the order (draft)
const draftSlot = () => `${NS}:draft:${cart}`;
const keysSlot = () => `${NS}:keys:${cart}`;
const timelineSlot = () => `${NS}:timeline:${cart}`;

const cartView = openCart({ store, slot: draftSlot });
const payload = () => cartView.payload();

// ---------------------------------------------------------------- keys of this order
function keysOfOrder() {
  let keys = [];
  try { keys = JSON.parse(store.get(keysSlot()) || '[]'); } catch { keys = []; }
  if (checkout && checkout.key && !keys.includes(checkout.key)) keys.push(checkout.key);
  return keys;
}
function rememberKey(key) {
  const keys = keysOfOrder();
  if (key && !keys.includes(key)) keys.push(key);
  store.set(keysSlot(), JSON.stringify(keys.slice(-20)));
}

// ---------------------------------------------------------------- the checkout (idemkey)
// Which server instance answered the newest charge POST (its Idemkey-Instance
// header), read off the response as it passes on its way to idemkey, so the
// timeline shows it on every try: behind the cluster's round robin a retry
// lands on another instance and still replays.
let lastInstance = null;
const pageFetch = window.fetch.bind(window);
window.fetch = async (input, init) => {
  const url = typeof input === 'string' ? input : input.url;
  const charge = new URL(url, location.href).pathname === '/api/charges';
  if (charge) lastInstance = null;
  const resp = await pageFetch(input, init);
  if (charge) lastInstance = resp.headers.get('idemkey-instance');
  return resp;
};

function openCheckout() {
  const gen = ++generation;
  checkout = null;
  const opened = Checkout.open({
    scope: cart,
    endpoint: '/api/charges',
    headers: { 'X-Customer-Id': customer },
    timeoutMs: TIMEOUT_MS,
    maxRetries: 5,
    backoff: { baseMs: 300, maxMs: 2000 },
    deadlineMs: 45000,
    onEvent: (e) => { if (gen === generation) onEvent(e); },
  });
  checkout = opened;
  lastState = checkout.state;
  rememberKey(checkout.key);
  $('#cart-id').textContent = cart;
  timeline.load(timelineSlot());
  renderAttempt();
}

function onEvent(e) {
  switch (e.type) {
    case 'attempt': {
      rememberKey(e.key);
      const n = e.attempt ?? (checkout ? checkout.attempts : 0);
      timeline.push({ kind: 'try', n, key: e.key, status: null, at: Date.now() });
      if (run) run.tries += 1;
      if (reloadOnAttempt) { reloadOnAttempt = false; setTimeout(() => location.reload(), 150); }
      break;
    }
    case 'response':
      timeline.patchLastTry({ status: e.status, replayed: !!e.replayed, instance: lastInstance });
      if (run) run.responses.push({ status: e.status, replayed: !!e.replayed });
      break;
    case 'retry':
      timeline.patchLastTry({ retryMs: e.delayMs, retryReason: e.reason });
      if (run) run.retries.push({ delayMs: e.delayMs, reason: e.reason });
      break;
    case 'storage-fallback':
      showTabNote(`Storage fell back from ${e.from} to ${e.to} (${e.reason}). The key lives there now.`);
      break;
    case 'storage-corrupt':
      showTabNote('An unreadable record was set aside; this checkout started afresh.');
      break;
    default:
      break;
  }
  if (checkout) renderAttempt();
}

function renderAttempt() {
  if (!checkout) return;
  const state = checkout.state;
  $('#key').textContent = checkout.key;
  const pill = $('#state');
  pill.textContent = state;
  pill.dataset.state = state;
  $('#attempts').textContent = String(checkout.attempts);
  $('#storage').textContent = checkout.storage + (['local', 'session'].includes(checkout.storage) ? 'Storage' : ' only');
  $('#expires').textContent = relTime(checkout.expiresAt);
  $('#expires').title = new Date(checkout.expiresAt).toLocaleString();
  if (state !== lastState && !run && lastState !== null) {
    // Changed while this tab was idle: another tab moved this order along.
    showTabNote(`Another tab changed this order: ${lastState} → ${state}.`);
  }
  lastState = state;
}

function showTabNote(text) {
  const note = $('#tab-note');
  note.textContent = text;
  note.hidden = false;
}

// ---------------------------------------------------------------- paying
function pay(source) {
  if (!checkout) return;
  if (!run && follow(store.get(cartSlot))) {
    return setOutcome('#outcome', 'info', 'Another tab finished that order.',
      'This tab now shows the new order that tab started. Nothing was sent.');
  }
  if (cartView.card.length < 12) {
    const err = $('#card-error');
    err.textContent = 'Enter a card number, or pick one of the test cards.';
    err.hidden = false;
    $('#card').setAttribute('aria-invalid', 'true');
    $('#card').focus();
    return;
  }
  if (run) run.clicks += 1;
  else run = { clicks: 1, source, tries: 0, retries: [], responses: [], keyBefore: checkout.key, stateBefore: checkout.state };
  const mine = run;
  setBusy($('#pay'), true);
  let p;
  try {
    p = checkout.submit(payload());
  } catch (err) {
    p = Promise.reject(err);
  }
  p.then((r) => settle(mine, r, null), (err) => settle(mine, null, err));
}

function settle(mine, result, error) {
  if (mine.done) return;
  mine.done = true;
  if (run === mine) run = null;
  setBusy($('#pay'), false);
  if (result && result.fromCache && mine.tries === 0) timeline.push({ kind: 'cache', key: result.key, at: Date.now() });
  if (!result && error && error.code === 'outcome-unknown' && mine.tries > 0) timeline.patchLastTry({ reason: 'gave up: outcome unknown, key kept' });
  renderAttempt();
  explain(mine, result, error, { key: checkout.key, state: checkout.state, timeoutMs: TIMEOUT_MS });
  ledger.refresh();
  faults.refresh();
  const charge = result && result.ok ? chargeId(result.body) : null;
  if (charge) mailer.follow(charge).then(() => faults.refresh(), () => {});
}

/** The charge id of a 201 body (a JSON string or an object). */
function chargeId(body) {
  let b = body;
  if (typeof b === 'string') { try { b = JSON.parse(b); } catch { return null; } }
  return b && typeof b === 'object' && typeof b.id === 'string' ? b.id : null;
}

$('#pay-form').addEventListener('submit', (ev) => { ev.preventDefault(); pay('click'); });

// ---------------------------------------------------------------- the user's moves
$('#move-double').addEventListener('click', () => { pay('double'); pay('double'); });

$('#move-reload').addEventListener('click', () => {
  if (cartView.card.length < 12) return pay('reload');
  session.set(`${NS}:reloaded`, '1');
  reloadOnAttempt = true;
  pay('reload');
  // Already paid: nothing is sent, so there is nothing to interrupt.
  setTimeout(() => { if (reloadOnAttempt && !run) { reloadOnAttempt = false; session.remove(`${NS}:reloaded`); } }, 50);
});

$('#move-tab').addEventListener('click', () => {
  window.open(location.href, '_blank');
  setOutcome('#outcome', 'info', 'A second tab is open on the same order.',
    'Press Pay there and here at about the same time. Only one tab sends at a time; the other waits, then finds the stored receipt. One charge.');
});

$('#move-new').addEventListener('click', () => {
  if (run) return setOutcome('#outcome', 'info', 'One moment.', 'Wait for the payment in flight to finish before starting a new order.');
  const was = checkout.state;
  // The other tabs hear of the next order before the module tells them this one ended: a
  // tab still showing the paid order after its checkout heard of finish() would pay it
  // again under the new key.
  cart = newCartId();
  store.set(cartSlot, cart);
  orders.postMessage(cart);
  // false: Web Storage refused to keep the end for later pages; the next order's cart is
  // new anyway, which is what the docs ask of a page then.
  const durable = checkout.finish();
  cartView.reload();
  $('#tab-note').hidden = true;
  openCheckout();
  ledger.refresh();
  setOutcome('#outcome', 'info', 'New order, new key.',
    `finish() ended the ${was} attempt, so this order starts fresh with key ${shortKey(checkout.key)}. Your earlier charges stay in the ledger.` +
    (durable ? '' : ' finish() returned false: Web Storage refused to keep the end for later pages. This order has a cart of its own, so no page pays it under the old key.'));
});

$('#move-reset').addEventListener('click', () => {
  if (run) return setOutcome('#outcome', 'info', 'One moment.', 'Wait for the payment in flight to finish before abandoning its key.');
  const was = checkout.state;
  const old = checkout.key;
  const durable = checkout.reset();
  lastState = checkout.state;                   // our own move, not another tab's
  renderAttempt();
  setOutcome('#outcome', 'info', 'This order has a new key.',
    `reset() abandoned ${shortKey(old)} (${was}) on purpose; the next Pay uses ${shortKey(checkout.key)}.` +
    (was === 'pending' ? ' Careful: that attempt\'s outcome was unknown, so paying again may charge twice. That is why idemkey never does this by itself.' : '') +
    (was === 'succeeded' ? ' This order is already paid, so paying again charges it a second time: the ledger will show it.' : '') +
    (durable ? '' : ' reset() returned false: Web Storage refused to keep the end, so a later page may still show the old key.'));
});

// ---------------------------------------------------------------- other tabs
// Another tab started a new order: follow it. Told on a channel of the demo's own, posted
// before that tab's finish() (localStorage's event can reach this tab well after the
// module's notice: over a second in WebKit), and by localStorage's event.
const orders = new BroadcastChannel(`${NS}:orders:${customer}`);
orders.onmessage = (ev) => follow(ev.data);
function follow(next) {
  if (typeof next !== 'string' || !next || next === cart) return false;
  cart = next;
  cartView.reload();
  openCheckout();
  showTabNote('Another tab started a new order; this tab follows it.');
  return true;
}

window.addEventListener('storage', (ev) => {
  if (ev.key === cartSlot) follow(ev.newValue);
  else if (ev.key === draftSlot()) cartView.reload();
  // Let the module apply the change first, then read its state.
  setTimeout(() => { renderAttempt(); ledger.refresh(); }, 30);
});

// ---------------------------------------------------------------- start
openCheckout();
openNaive({ api, payload, timeoutMs: TIMEOUT_MS, ledger, onDone: faults.refresh });
ledger.refresh();
faults.refresh();
setInterval(() => { if (document.visibilityState === 'visible') { ledger.refresh(); renderAttempt(); } }, 5000);

if (session.get(`${NS}:reloaded`) === '1') {
  session.remove(`${NS}:reloaded`);
  setOutcome('#outcome', 'info', 'You reloaded in the middle of a payment.',
    `The key was saved before the request left, so it survived the reload: ${shortKey(checkout.key)}, state ${checkout.state}. Press Pay: the same key goes out, and the server either finishes the charge or replays it. Never two.`, { key: checkout.key });
} else if (checkout.state === 'pending') {
  setOutcome('#outcome', 'unknown', 'An earlier payment has no answer yet.',
    `The attempt with key ${shortKey(checkout.key)} is still pending. Press Pay to resume it with the same key; you will be charged at most once.`, { key: checkout.key });
} else if (checkout.state === 'succeeded') {
  setOutcome('#outcome', 'paid', 'This order is paid.', 'Pressing Pay again sends nothing. Start a new order to buy again.', { key: checkout.key });
}
document.body.dataset.ready = 'true';
