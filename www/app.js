// Kettle & Bean: the idemkey demo checkout. Plain ES module, no build step
// (the wasm-bindgen "without a bundler" pattern): the reference server serves
// this directory at / and the wasm-pack output at /pkg/.
import init, { Checkout, newKey } from '/pkg/idemkey.js';
import { $, el, money, shortKey, relTime, store, session, setOutcome } from './ui.js';
import { openLedger } from './ledger.js';
import { openNaive } from './naive.js';
import { openTimeline, reasonText } from './timeline.js';
import { openFaults } from './faults.js';

const NS = 'idemkey-demo';
const TIMEOUT_MS = 3000;          // per try; the "slow answer" fault outlasts it
const SLOW_MS = 6000;
const CURRENCY = 'EUR';
const CATALOG = [
  { sku: 'yirgacheffe-250', name: 'Ethiopia Yirgacheffe', detail: 'Whole bean · 250 g', price: 1450, qty: 1, tone: '#8a5a2b' },
  { sku: 'gooseneck-kettle', name: 'Gooseneck kettle', detail: '0.9 l · brushed steel', price: 3900, qty: 1, tone: '#5b6b7a' },
  { sku: 'filters-100', name: 'Paper filters', detail: 'Pack of 100', price: 600, qty: 2, tone: '#c9b48a' },
];
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

// ---------------------------------------------------------------- the order (draft)
const draftSlot = () => `${NS}:draft:${cart}`;
const keysSlot = () => `${NS}:keys:${cart}`;
const timelineSlot = () => `${NS}:timeline:${cart}`;

function loadDraft() {
  let d = null;
  try { d = JSON.parse(store.get(draftSlot()) || 'null'); } catch { d = null; }
  const qty = {};
  for (const item of CATALOG) qty[item.sku] = Number.isInteger(d?.qty?.[item.sku]) ? d.qty[item.sku] : item.qty;
  return { qty, card: typeof d?.card === 'string' ? d.card : '4242424242424242' };
}
let draft = loadDraft();
const saveDraft = () => store.set(draftSlot(), JSON.stringify(draft));
const totalOf = (d) => CATALOG.reduce((sum, item) => sum + item.price * d.qty[item.sku], 0);
const cardDigits = (s) => s.replace(/\D/g, '');
const groupCard = (digits) => digits.replace(/(.{4})(?=.)/g, '$1 ');

function payload() {
  return {
    amount: totalOf(draft),
    currency: CURRENCY,
    items: CATALOG.filter((i) => draft.qty[i.sku] > 0).map((i) => ({ sku: i.sku, qty: draft.qty[i.sku], unit_amount: i.price })),
    card: draft.card,
  };
}

function renderCart() {
  const list = $('#cart');
  list.replaceChildren(...CATALOG.map((item) => {
    const n = draft.qty[item.sku];
    const minus = el('button', { type: 'button', class: 'step', 'aria-label': `One fewer ${item.name}`, disabled: n <= 1 }, '−');
    const plus = el('button', { type: 'button', class: 'step', 'aria-label': `One more ${item.name}`, disabled: n >= 9 }, '+');
    minus.addEventListener('click', () => changeQty(item.sku, -1));
    plus.addEventListener('click', () => changeQty(item.sku, +1));
    return el('li', { class: 'line' },
      el('span', { class: 'thumb', style: `--tone:${item.tone}`, 'aria-hidden': 'true' }, item.name[0]),
      el('span', { class: 'line-name' }, el('strong', {}, item.name), el('small', {}, `${item.detail} · ${money(item.price, CURRENCY)}`)),
      el('span', { class: 'qty', role: 'group', 'aria-label': `Quantity of ${item.name}` }, minus, el('output', { 'aria-live': 'polite' }, String(n)), plus),
      el('span', { class: 'line-total' }, money(item.price * n, CURRENCY)));
  }));
  const total = money(totalOf(draft), CURRENCY);
  $('#total').textContent = total;
  $('#pay-amount').textContent = total;
  $('#naive-amount').textContent = total;
  const card = $('#card');
  if (cardDigits(card.value) !== draft.card) card.value = groupCard(draft.card);
}

function changeQty(sku, delta) {
  draft.qty[sku] = Math.min(9, Math.max(1, draft.qty[sku] + delta));
  saveDraft();
  renderCart();
}

$('#card').addEventListener('input', (ev) => {
  const input = ev.target;
  const digits = cardDigits(input.value).slice(0, 19);
  draft.card = digits;
  saveDraft();
  $('#card-error').hidden = true;
  input.removeAttribute('aria-invalid');
  const formatted = groupCard(digits);
  if (formatted !== input.value) input.value = formatted;
});
for (const chip of document.querySelectorAll('[data-card]')) {
  chip.addEventListener('click', () => {
    draft.card = chip.dataset.card;
    saveDraft();
    renderCart();
    $('#card').focus();
  });
}

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
      timeline.patchLastTry({ status: e.status, replayed: !!e.replayed });
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
  $('#storage').textContent = checkout.storage + (checkout.storage === 'local' ? 'Storage' : checkout.storage === 'session' ? 'Storage' : ' only');
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
  const digits = draft.card;
  if (digits.length < 12) {
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
  setBusy(true);
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
  setBusy(false);
  if (result && result.fromCache && mine.tries === 0) timeline.push({ kind: 'cache', key: result.key, at: Date.now() });
  if (!result && error && error.code === 'outcome-unknown' && mine.tries > 0) timeline.patchLastTry({ reason: 'gave up: outcome unknown, key kept' });
  renderAttempt();
  explain(mine, result, error);
  ledger.refresh();
  faults.refresh();
}

function setBusy(busy) {
  document.body.dataset.busy = String(busy);
  const btn = $('#pay');
  btn.classList.toggle('is-busy', busy);
  btn.setAttribute('aria-busy', String(busy));
}

function receiptId(body) {
  let b = body;
  if (typeof b === 'string') { try { b = JSON.parse(b); } catch { return null; } }
  return b && typeof b === 'object' ? (b.id ?? b.charge?.id ?? null) : null;
}

function explain(m, r, err) {
  const clicks = m.clicks > 1 ? `You pressed Pay ${m.clicks} times; all of them joined one request sequence with one key. ` : '';
  const retried = m.retries.length;
  const firstWhy = retried ? reasonText(m.retries[0].reason, TIMEOUT_MS).replace(/^status /, 'a ') : '';
  if (err) {
    const code = err.code || err.name || 'error';
    if (code === 'outcome-unknown') {
      return setOutcome('#outcome', 'unknown', 'We could not find out whether you were charged.',
        `${clicks}idemkey tried ${m.tries} time(s) and never got a clear answer. The key ${shortKey(checkout.key)} is kept and the attempt stays pending, so press Pay again, now or after a reload: the same key goes out and the server charges at most once.`, { key: checkout.key });
    }
    if (code === 'payload-conflict') {
      return setOutcome('#outcome', 'conflict', 'The order changed after its key was used.',
        `This key belongs to a ${checkout.state === 'succeeded' ? 'paid' : 'possibly paid'} order with different contents. idemkey will not reuse it for a different order, nor quietly swap it for a new one. Undo the change, or start a new order.`, { key: checkout.key });
    }
    return setOutcome('#outcome', 'error', 'Something went wrong before the payment went out.', `${code}: ${err.message}`);
  }
  const id = receiptId(r.body);
  const data = { key: r.key, status: r.status, replayed: r.replayed, fromCache: r.fromCache };
  if (r.ok && r.fromCache && m.tries === 0) {
    if (m.stateBefore !== 'succeeded') {
      return setOutcome('#outcome', 'paid', 'Paid, by another tab.',
        `${clicks}Another tab was paying this order at the same moment. This tab waited its turn, found that tab's receipt${id ? ` (${id})` : ''} in storage, and sent nothing. One charge.`, { ...data, waited: true });
    }
    return setOutcome('#outcome', 'paid', 'Already paid: nothing was sent.',
      `${clicks}This order succeeded earlier, so idemkey answered from the receipt it kept${id ? ` (${id})` : ''} and sent no request. Still one charge. To buy again, start a new order.`, data);
  }
  if (r.ok && r.replayed) {
    const what = retried
      ? `The first try got ${firstWhy}, though the server had already saved the charge. idemkey retried with the same key, and`
      : m.stateBefore === 'pending'
        ? 'This key had reached the server before (the earlier try whose answer never came back), so'
        : 'The request reached the server twice: the connection dropped after the charge was saved, and the browser quietly re-sent it by itself. Both copies carried the same key, so';
    return setOutcome('#outcome', 'paid', 'Paid once, even though an answer got lost.',
      `${clicks}${what} the server recognised it and replayed the saved receipt${id ? ` (${id})` : ''} instead of charging again. One charge in the ledger.`, data);
  }
  if (r.ok && retried) {
    return setOutcome('#outcome', 'paid', 'Paid, on a retry.',
      `${clicks}The first try got ${firstWhy}; nothing had been saved. idemkey waited ${Math.round(m.retries[0].delayMs)} ms and retried with the same key, and this time the payment went through${id ? ` (${id})` : ''}. One charge.`, data);
  }
  if (r.ok && m.stateBefore === 'pending') {
    return setOutcome('#outcome', 'paid', 'Paid, by resuming the earlier attempt.',
      `${clicks}This Pay reused the pending attempt's key ${shortKey(r.key)}. None of the earlier tries had gone through, so this one made the charge${id ? ` (${id})` : ''}; had one of them gone through, the server would have replayed it instead. One charge.`, data);
  }
  if (r.ok) {
    return setOutcome('#outcome', 'paid', 'Paid. Thank you!',
      `${clicks}One key, ${m.tries === 1 ? 'one request' : `${m.tries} requests`}, one charge${id ? ` (${id})` : ''}. Press Pay again and idemkey answers from the stored receipt without sending anything.`, data);
  }
  if (r.status === 402) {
    return setOutcome('#outcome', 'declined', 'Your card was declined.',
      `${clicks}The bank said no (402), so nothing was charged and this attempt is marked failed. Pick another card and pay again: idemkey starts a new attempt with a new key, which is safe because the server said nothing happened.`, data);
  }
  return setOutcome('#outcome', 'refused', `The server refused the payment (${r.status}).`,
    `${clicks}That answer is final, so idemkey does not retry it; the attempt is marked failed and the next Pay uses a new key.`, data);
}

$('#pay-form').addEventListener('submit', (ev) => { ev.preventDefault(); pay('click'); });

// ---------------------------------------------------------------- the user's moves
$('#move-double').addEventListener('click', () => { pay('double'); pay('double'); });

$('#move-reload').addEventListener('click', () => {
  if (draft.card.length < 12) return pay('reload');
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
  checkout.finish();
  cart = newCartId();
  store.set(cartSlot, cart);
  draft = loadDraft();
  renderCart();
  $('#tab-note').hidden = true;
  openCheckout();
  ledger.refresh();
  setOutcome('#outcome', 'info', 'New order, new key.',
    `finish() forgot the ${was} attempt, so this order starts fresh with key ${shortKey(checkout.key)}. Your earlier charges stay in the ledger.`);
});

$('#move-reset').addEventListener('click', () => {
  if (run) return setOutcome('#outcome', 'info', 'One moment.', 'Wait for the payment in flight to finish before abandoning its key.');
  const was = checkout.state;
  const old = checkout.key;
  checkout.reset();
  lastState = checkout.state;                   // our own move, not another tab's
  renderAttempt();
  setOutcome('#outcome', 'info', 'This order has a new key.',
    `reset() abandoned ${shortKey(old)} (${was}) on purpose; the next Pay uses ${shortKey(checkout.key)}.` +
    (was === 'pending' ? ' Careful: that attempt\'s outcome was unknown, so paying again may charge twice. That is why idemkey never does this by itself.' : ''));
});

// ---------------------------------------------------------------- other tabs
window.addEventListener('storage', (ev) => {
  if (ev.key === cartSlot && ev.newValue && ev.newValue !== cart) {
    cart = ev.newValue;                         // another tab started a new order: follow it
    draft = loadDraft();
    renderCart();
    openCheckout();
    showTabNote('Another tab started a new order; this tab follows it.');
  } else if (ev.key === draftSlot()) {
    draft = loadDraft();
    renderCart();
  }
  // Let the module apply the change first, then read its state.
  setTimeout(() => { renderAttempt(); ledger.refresh(); }, 30);
});

// ---------------------------------------------------------------- start
renderCart();
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
