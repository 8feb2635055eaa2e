// A second tab that opens the checkout 10-20 ms after the first tab stored its pending
// record and sent, then pays too: still one charge. Chromium delivers one tab's
// localStorage writes to another tab as a task of the other tab's main thread, so a tab
// busy at that moment (rendering, running the page's own scripts) reads the old value
// when it opens; it must never send a key of its own over the record it has not seen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario } from './harness.mjs';

const SCOPES = Number(process.env.TABS_RACE_SCOPES || 20);
const PAYLOAD = { amount: 4200, currency: 'eur', items: [{ sku: 'tea', qty: 2 }] };

// Both pages wait for their moment by spinning: a page that is not in front gets its
// timers late (Chromium aligns them to whole seconds), which would undo the order.

/** In the page: at `at` (ms since the epoch) open `scope` and pay; when the first try left. */
async function payFirst({ scope, customer, payload, at }) {
  const { Checkout } = await import('/pkg/idemkey.js');
  while (Date.now() < at) { /* waiting for the moment */ }
  return new Promise((sent) => {
    const c = Checkout.open({
      scope, endpoint: '/api/charges', headers: { 'X-Customer-Id': customer },
      onEvent: (e) => { if (e.type === 'attempt') sent(Date.now()); },
    });
    window.raceResult = c.submit(payload).then(
      (r) => ({ ok: r.ok, status: r.status, key: r.key, fromCache: r.fromCache }),
      (e) => ({ error: e.code, message: e.message }));
    window.raceResult.then(() => sent(null));
  });
}

/**
 * In the page: busy until `openAt` (one long task, as a page rendering its checkout has:
 * the other tab's storage writes wait for its end), then open `scope` and pay; the result.
 */
async function paySecond({ scope, customer, payload, openAt }) {
  const { Checkout } = await import('/pkg/idemkey.js');
  while (Date.now() < openAt) { /* the page's own work */ }
  const c = Checkout.open({ scope, endpoint: '/api/charges', headers: { 'X-Customer-Id': customer } });
  return c.submit(payload).then(
    (r) => ({ ok: r.ok, status: r.status, key: r.key, fromCache: r.fromCache }),
    (e) => ({ error: e.code, message: e.message }));
}

test(`a tab opening the scope 10-20 ms after another tab sent charges once (${SCOPES} scopes)`, { timeout: 240000 }, () =>
  scenario('tabs-race', { providerLatencyMs: 300 }, async ({ openPage, server, customer }) => {
    // Both pages are loaded (and have read localStorage) before the race, as two open tabs are.
    const one = await openPage();
    const two = await openPage();
    // The paying tab in front: a background page gets its tasks late.
    await one.bringToFront();
    const twice = [];
    const problems = [];
    for (let i = 0; i < SCOPES; i += 1) {
      const who = `${customer}-${i}`;
      const scope = `race-${i}-${who}`;
      const at = Date.now() + 400;
      const gap = 10 + (i % 11);
      const [sentAt, r2] = await Promise.all([
        one.evaluate(payFirst, { scope, customer: who, payload: PAYLOAD, at }),
        // Tab one stores pending and sends about 2 ms after `at`.
        two.evaluate(paySecond, { scope, customer: who, payload: PAYLOAD, openAt: at + 2 + gap }),
      ]);
      const r1 = await one.evaluate(() => window.raceResult);
      const res = await fetch(`${server.url}/api/charges`, { headers: { 'X-Customer-Id': who } });
      const charges = (await res.json()).charges;
      const row = { i, sentAfter: sentAt && sentAt - at, r1, r2, charges: charges.length };
      if (charges.length !== 1) twice.push(row);
      else if (!r1.ok || !r2.ok || r1.key !== r2.key || r1.key !== charges[0].key) problems.push(row);
    }
    console.log(`tabs-race: ${SCOPES} scopes, ${twice.length} charged more than once, ${problems.length} other mismatches`);
    assert.deepEqual(twice, [], `scopes charged more than once: ${twice.length} of ${SCOPES}`);
    assert.deepEqual(problems, [], 'both tabs resolve ok with the one charged key');
  }));
