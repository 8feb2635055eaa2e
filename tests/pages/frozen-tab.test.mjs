// A tab whose JavaScript stops (a mobile browser freezing a background tab; here the
// DevTools debugger's pause, in Chromium) while it holds the checkout: mid-payment, with
// its request on the wire, or as its Pay is handed the scope's lock. The customer presses Pay in a
// second tab: that submit settles within its deadlineMs plus a second, with the stored
// answer or with outcome-unknown saying another tab holds the checkout; so do a second
// press and a press after a reload. Once the first tab thaws: one charge, one key.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchChromium } from '../support/reference.mjs';
import { pagesServer } from './suite.mjs';

const DEADLINE_MS = 3000;
// How long a press is watched before it counts as hung: past its bound, so that a hang is
// told apart from a late answer.
const WATCH_MS = 6000;
const TRIES = 2;
const BASKET = { amount: 4200, currency: 'EUR', items: [{ sku: 'tea', qty: 2 }] };

const server = pagesServer(['--faults']);
let browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

async function tabPage(context) {
  const page = await context.newPage();
  await page.goto(`${server.url}/tab.html`);
  await page.waitForFunction(() => window.ready);
  return page;
}

/**
 * Presses Pay in `page` (Checkout.open of the scope, then submit with deadlineMs): how long
 * it took to settle and how, or `settled: false` if it had not within WATCH_MS.
 */
function press(page, options) {
  return page.evaluate(async ({ options, basket, watch }) => {
    const c = window.idemkey.Checkout.open(options);
    const t0 = performance.now();
    const settled = c.submit(basket).then(
      (r) => ({ ok: r.ok, status: r.status, key: r.key, fromCache: r.fromCache }),
      (e) => ({ error: e.code, reason: e.reason, message: e.message }));
    const out = await Promise.race([settled, new Promise((r) => setTimeout(() => r(null), watch))]);
    return out ? { settled: true, ms: Math.round(performance.now() - t0), ...out } : { settled: false };
  }, { options, basket: BASKET, watch: WATCH_MS });
}

/** What is wrong with a press's outcome ('' if nothing): settled in time, stored answer or another-tab. */
function wrongPress(out, key) {
  if (!out.settled) return `still waiting after ${WATCH_MS / 1000} s`;
  if (out.ms > DEADLINE_MS + 1000) return `settled after ${out.ms} ms`;
  if (out.error) {
    const anotherTab = out.error === 'outcome-unknown' && out.reason === 'another-tab';
    return anotherTab ? '' : `rejected ${out.error} (${out.reason}): ${out.message}`;
  }
  return out.key === key && out.fromCache ? '' : `resolved ${JSON.stringify(out)}`;
}

/**
 * One try (`seen` gets how each press settled): tab 1 freezes (`freeze({ one, two, cdp, options, customer })` leaves its
 * JavaScript paused, or about to pause, while it holds the scope), tab 2 presses Pay,
 * presses again, reloads and presses again; tab 1 thaws. Returns the problems seen, in words.
 */
async function frozenTry(freeze, seen) {
  const context = await browser.newContext();
  const id = Math.random().toString(36).slice(2, 10);
  const customer = `frozen-${id}`;
  const options = { scope: `cart-${id}`, endpoint: '/api/charges', headers: { 'X-Customer-Id': customer }, deadlineMs: DEADLINE_MS };
  const keys = new Set();
  context.on('request', (req) => {
    if (req.method() === 'POST' && new URL(req.url()).pathname === '/api/charges') keys.add(req.headers()['idempotency-key']);
  });
  const problems = [];
  try {
    const [one, two] = [await tabPage(context), await tabPage(context)];
    const cdp = await context.newCDPSession(one);
    await cdp.send('Debugger.enable');
    const paused = new Promise((resolve) => cdp.once('Debugger.paused', resolve));
    await freeze({ one, two, cdp, options, customer });
    await paused;
    // The frozen tab holds the scope's lock (else the try shows nothing).
    const held = await two.evaluate(() => navigator.locks.query().then((q) => q.held.map((l) => l.name)));
    assert.ok(held.some((n) => n.includes(options.scope)), `the frozen tab holds no lock of the scope: ${held}`);
    const key = await two.evaluate((o) => window.idemkey.Checkout.open(o).key, options);

    for (const when of ['Pay', 'Pay again', 'Pay after a reload']) {
      if (when === 'Pay after a reload') {
        await two.reload();
        await two.waitForFunction(() => window.ready);
      }
      const out = await press(two, options);
      const what = wrongPress(out, key);
      if (what) problems.push(`${when}: ${what}`);
      else seen.push(`${when}: ${out.error ? out.reason : out.fromCache ? 'the stored answer' : 'resolved'} after ${out.ms} ms`);
    }

    await cdp.send('Debugger.resume');
    await cdp.send('Debugger.disable');
    const last = await press(two, { ...options, deadlineMs: 30000 });
    if (!last.settled || !last.ok || !keys.has(last.key)) problems.push(`after the thaw: ${JSON.stringify(last)}`);
    const charges = await server.ledger(customer);
    if (charges.length > 1) problems.push(`${charges.length} charges`);
    if (keys.size > 1) problems.push(`${keys.size} keys sent`);
  } finally {
    await context.close();
  }
  return problems;
}

async function run(t, freeze) {
  const seen = [];
  for (let i = 0; i < TRIES; i += 1) {
    const settled = [];
    const problems = await frozenTry(freeze, settled);
    seen.push(problems);
    t.diagnostic(`try ${i + 1}: ${settled.join('; ')}`);
  }
  const lines = seen.map((p, i) => `try ${i + 1}: ${p.join('; ') || 'ok'}`);
  for (const line of lines) t.diagnostic(line);
  const summary = lines.join('\n  ');
  assert.ok(seen.every((p) => p.length === 0), `a tab waited on a frozen one:\n  ${summary}`);
}

// P-wait-bounded: a tab frozen mid-payment: Pay in another tab settles within deadlineMs plus a second; one charge
test('a tab frozen with its request on the wire: Pay in another tab settles within its deadline, one charge', { timeout: 120000 }, (t) =>
  run(t, async ({ one, cdp, options, customer }) => {
    // The server commits the charge, then holds its answer: the tab's JavaScript stops
    // before it hears it, with the scope's lock held.
    await server.api('POST', '/api/faults', customer, { mode: 'delay-after-commit', count: 1, delay_ms: 1500 });
    const sent = one.waitForRequest((req) => req.method() === 'POST' && new URL(req.url()).pathname === '/api/charges');
    await one.evaluate(({ options, basket }) => {
      window.paying = window.idemkey.Checkout.open(options).submit(basket).catch(() => {});
    }, { options, basket: BASKET });
    await sent;
    await cdp.send('Debugger.pause');
  }));

// P-wait-bounded: a tab frozen as its Pay is handed the lock: Pay in another tab settles within deadlineMs plus a second
test('a tab frozen as its Pay is handed the lock: Pay in another tab settles within its deadline, one charge', { timeout: 120000 }, (t) =>
  run(t, async ({ one, two, cdp, options }) => {
    // Pay asks for the scope's Web Lock before anything is stored or sent. The lock is busy
    // a moment (tab 2 holds it), so tab 1 is paused while it waits, and is handed the lock
    // frozen: its JavaScript stops as the lock's callback starts.
    const name = `idemkey:idemkey:v1:${options.scope}`;
    await two.evaluate((n) => new Promise((held) => {
      navigator.locks.request(n, () => new Promise((release) => { window.releaseLock = release; held(); }));
    }), name);
    await one.evaluate(({ options, basket }) => {
      window.paying = window.idemkey.Checkout.open(options).submit(basket).catch(() => {});
    }, { options, basket: BASKET });
    await two.evaluate(async (n) => {
      while (!(await navigator.locks.query()).pending.some((l) => l.name === n)) await new Promise((r) => setTimeout(r, 10));
    }, name);
    await cdp.send('Debugger.pause');
    await two.evaluate(() => window.releaseLock());
  }));
