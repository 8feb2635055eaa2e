// One Pay, a double-click and a five-click burst: one charge, one request sequence.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, pay, seq, nextOutcome, attempt, tries, assertOneSequence } from './harness.mjs';

// P-succeeded-from-cache: Pay again after success: answered from storage, nothing sent
test('one Pay makes one charge; paying again sends nothing', { timeout: 60000 }, () =>
  scenario('pay-once', {}, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    const before = await attempt(page);
    assert.equal(before.state, 'fresh');

    const out = await pay(page);
    assert.equal(out.kind, 'paid');
    assert.equal(out.status, '201');
    assert.equal(out.key, before.key, 'the key shown before paying is the one used');
    const after = await attempt(page);
    assert.equal(after.state, 'succeeded');
    assert.equal(after.key, before.key);
    assertOneSequence(posts, 1);

    const again = await pay(page);
    assert.equal(again.kind, 'paid');
    assert.equal(again.fromCache, 'true', 'a second Pay is answered from storage');
    assert.equal(posts.length, 1, 'a second Pay after success sends nothing');

    const l = await ledger();
    assert.equal(l.count, 1);
    assert.equal(l.charges[0].key, before.key);
    await page.waitForFunction(() => document.querySelector('#order-charges').textContent === '1');
  }));

// P-one-sequence: a double-click on Pay: one request sequence, one charge
test('a double-click on Pay makes one charge and one request sequence', { timeout: 60000 }, () =>
  scenario('double-click', { providerLatencyMs: 400 }, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    const since = await seq(page);
    await page.dblclick('#pay');
    const out = await nextOutcome(page, since);
    assert.equal(out.kind, 'paid');
    assert.equal(out.clicks, '2', 'both clicks called submit() and were answered by one result');
    assertOneSequence(posts, 1);
    assert.equal((await ledger()).count, 1);
    const rows = await tries(page);
    assert.equal(rows.length, 1, 'the timeline shows one try');
    const [only] = rows;
    assert.ok(only && /^127\.0\.0\.1:\d+$/.test(only.instance || ''), `the try names the instance that answered: ${only && only.instance}`);

    // The page's own "Double-click Pay" move, on a new order.
    await page.click('#move-new');
    const key2 = (await attempt(page)).key;
    const since2 = await seq(page);
    await page.click('#move-double');
    const out2 = await nextOutcome(page, since2);
    assert.equal(out2.kind, 'paid');
    assert.equal(out2.clicks, '2');
    assert.equal(out2.key, key2);
    assert.equal(posts.length, 2);
    assert.equal(posts[1].key, key2);
    assert.notEqual(posts[0].key, key2, 'a new order has a new key');
    assert.equal((await ledger()).count, 2, 'two orders, two charges');
  }));

// P-one-sequence: five clicks: one request sequence, one charge
test('a five-click burst makes one charge and one request sequence', { timeout: 60000 }, () =>
  scenario('five-clicks', { providerLatencyMs: 400 }, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    const since = await seq(page);
    // Five real mouse clicks in one burst (one input sequence, so a slow machine
    // cannot spread them past the end of the payment).
    await page.click('#pay', { clickCount: 5 });
    const out = await nextOutcome(page, since);
    assert.equal(out.kind, 'paid');
    assert.equal(out.clicks, '5', 'all five clicks called submit() and were answered by one result');
    assertOneSequence(posts, 1);
    const l = await ledger();
    assert.equal(l.count, 1);
    assert.equal(l.charges[0].key, posts[0].key);
    assert.equal((await attempt(page)).state, 'succeeded');
  }));
