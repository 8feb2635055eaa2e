// Two tabs paying the same checkout at once: one charge.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, ready, pay, seq, nextOutcome, attempt } from './harness.mjs';

// P-tabs-one-sender: two tabs paying at once: one charge
test('two tabs paying the same checkout at once make one charge', { timeout: 60000 }, () =>
  scenario('two-tabs', { providerLatencyMs: 500 }, async ({ context, openPage, ledger, posts }) => {
    const one = await openPage();
    const [two] = await Promise.all([context.waitForEvent('page'), one.click('#move-tab')]);
    await two.waitForLoadState();
    await ready(two);
    // Nothing is stored before the first Pay: each tab shows a key of its own until one
    // of them pays; the other then switches to that key before it sends anything.
    const a = await attempt(one);
    const b = await attempt(two);
    // Which order each tab is on, for the message below: a tab that follows another tab's
    // new order (www/app.js, follow()) shows a new key, of that order.
    const carts = () => Promise.all([one, two].map((p) => p.textContent('#cart-id')));
    const cartsBefore = await carts();

    const s1 = await seq(one);
    const s2 = await seq(two);
    // Click both at once from script: Playwright's own click waits for animation
    // frames, which a background tab gets late, so the second click could land
    // after the first payment was over.
    await Promise.all([one, two].map((page) => page.evaluate(() => document.querySelector('#pay').click())));
    const [o1, o2] = await Promise.all([nextOutcome(one, s1), nextOutcome(two, s2)]);
    assert.equal(o1.kind, 'paid', `tab one: ${o1.title} ${o1.text}`);
    assert.equal(o2.kind, 'paid', `tab two: ${o2.title} ${o2.text}`);
    assert.equal(o2.key, o1.key, 'both tabs paid under one key');
    assert.ok([a.key, b.key].includes(o1.key),
      `a key neither tab showed: ${o1.key} (shown: ${a.key} and ${b.key} on orders ${cartsBefore}; orders now ${await carts()})`);
    const waited = [o1, o2].filter((o) => o.waited === 'true');
    assert.equal(waited.length, 1, 'one tab waited for the other one, which was still paying, and found its result');
    assert.equal(waited[0].fromCache, 'true');

    assert.equal(posts.length, 1, `one request between both tabs, saw ${posts.length}`);
    const l = await ledger();
    assert.equal(l.count, 1, 'one charge');
    assert.equal(l.charges[0].key, o1.key);
    for (const page of [one, two]) {
      await page.waitForFunction(() => document.querySelector('#state').dataset.state === 'succeeded');
    }
  }));

// P-tabs-follow-state: a Pay in one tab shows in the other tab's panel
test('a Pay in one tab shows up in the other tab\'s attempt panel', { timeout: 60000 }, () =>
  scenario('tab-sync', {}, async ({ openPage, ledger }) => {
    const one = await openPage();
    const two = await openPage();
    // Playwright's click waits for animation frames, which only the tab in front
    // gets promptly: pay in tab one in front, watch tab two update in the background.
    await one.bringToFront();
    const paid = await pay(one);
    assert.equal(paid.kind, 'paid');
    await two.waitForFunction(() => document.querySelector('#state').dataset.state === 'succeeded', null, { timeout: 10000 });
    assert.equal((await attempt(two)).key, paid.key, 'the other tab shows the key paid under');
    await two.waitForFunction(() => document.querySelector('#order-charges').textContent === '1', null, { timeout: 10000 });
    await two.bringToFront();
    const o2 = await pay(two);
    assert.equal(o2.fromCache, 'true');
    assert.equal((await ledger()).count, 1);
  }));
