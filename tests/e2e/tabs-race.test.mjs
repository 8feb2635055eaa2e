// A second tab that opens the checkout a few milliseconds after the first tab stored its
// pending record and sent, then pays too: still one charge. Chromium delivers one tab's
// localStorage writes to another tab asynchronously, so the second tab may not have seen
// the first tab's record yet when it opens; it must never send a key of its own over it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario } from './harness.mjs';

const SCOPES = 30;
const PAYLOAD = { amount: 4200, currency: 'eur', items: [{ sku: 'tea', qty: 2 }] };

/** In the page: open `scope` and submit; resolves when the first try leaves, with its time. */
function payFirst({ scope, customer, payload }) {
  return import('/pkg/idemkey.js').then(({ Checkout }) => new Promise((sent) => {
    const c = Checkout.open({
      scope, endpoint: '/api/charges', headers: { 'X-Customer-Id': customer },
      onEvent: (e) => { if (e.type === 'attempt') sent(Date.now()); },
    });
    window.raceResult = c.submit(payload).then(
      (r) => ({ ok: r.ok, status: r.status, key: r.key, fromCache: r.fromCache }),
      (e) => ({ error: e.code, message: e.message }));
  }));
}

/** In the page: at `at` (ms since the epoch), open `scope` and submit; the result. */
async function paySecond({ scope, customer, payload, at }) {
  const { Checkout } = await import('/pkg/idemkey.js');
  await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
  const c = Checkout.open({ scope, endpoint: '/api/charges', headers: { 'X-Customer-Id': customer } });
  return c.submit(payload).then(
    (r) => ({ ok: r.ok, status: r.status, key: r.key, fromCache: r.fromCache }),
    (e) => ({ error: e.code, message: e.message }));
}

test(`a tab opening the scope 10-20 ms after another tab sent charges once (${SCOPES} scopes)`, { timeout: 180000 }, () =>
  scenario('tabs-race', { providerLatencyMs: 300 }, async ({ openPage, server, customer }) => {
    // Both pages are loaded (and have read localStorage) before the race, as two open tabs are.
    const one = await openPage();
    const two = await openPage();
    const twice = [];
    const problems = [];
    for (let i = 0; i < SCOPES; i += 1) {
      const who = `${customer}-${i}`;
      const scope = `race-${i}-${who}`;
      const sentAt = await one.evaluate(payFirst, { scope, customer: who, payload: PAYLOAD });
      const r2 = await two.evaluate(paySecond, { scope, customer: who, payload: PAYLOAD, at: sentAt + 10 + (i % 11) });
      const r1 = await one.evaluate(() => window.raceResult);
      const res = await fetch(`${server.url}/api/charges`, { headers: { 'X-Customer-Id': who } });
      const charges = (await res.json()).charges;
      if (charges.length !== 1) twice.push({ i, charges: charges.length, r1, r2 });
      else if (!r1.ok || !r2.ok || r1.key !== r2.key || r1.key !== charges[0].key) problems.push({ i, r1, r2, key: charges[0].key });
    }
    console.log(`tabs-race: ${SCOPES} scopes, ${twice.length} charged more than once, ${problems.length} other mismatches`);
    assert.deepEqual(twice, [], `scopes charged more than once: ${twice.length} of ${SCOPES}`);
    assert.deepEqual(problems, [], 'both tabs resolve ok with the one charged key');
  }));
