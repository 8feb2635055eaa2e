// A reload in the middle of a request keeps the key: paying again charges once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, ready, pay, armFault, attempt, tries, isChargePost } from './harness.mjs';

// P-refresh-finds-key: a reload during a slow request shows the same key; one charge
test('reload during a slow request, then Pay again: the same key, one charge', { timeout: 60000 }, () =>
  scenario('reload-slow', {}, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    const { key } = await attempt(page);
    await armFault(page, 'delay-after-commit');
    // The request is on the wire; the server commits, then holds the answer for seconds.
    const sent = page.waitForRequest(isChargePost);
    await page.click('#pay');
    await sent;
    await page.waitForSelector('#timeline li.try[data-try="1"]');
    assert.equal((await attempt(page)).state, 'pending');

    await page.reload();
    await ready(page);
    const back = await attempt(page);
    assert.equal(back.key, key, 'the key survived the reload');
    assert.equal(back.state, 'pending', 'the outcome is unknown after the reload');
    assert.equal(await page.getAttribute('#outcome', 'data-kind'), 'unknown');

    const out = await pay(page);
    assert.equal(out.kind, 'paid', `outcome: ${out.title} ${out.text}`);
    assert.equal(out.key, key);
    assert.ok(posts.length >= 2);
    assert.ok(posts.every((p) => p.key === key), 'every request used the first key');
    const l = await ledger();
    assert.equal(l.count, 1, 'one charge');
    assert.equal(l.charges[0].key, key);
  }));

// P-refresh-finds-key: the demo's reload mid-payment keeps the key
test('the "Reload mid-payment" move: the same key after the reload, one charge', { timeout: 60000 }, () =>
  // The second Pay can reach the server while the cut-off request is still being
  // processed: 409 with Retry-After, which idemkey retries.
  scenario('reload-move', { providerLatencyMs: 800, failedLoads: ['409'] }, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    const { key } = await attempt(page);
    const loaded = page.waitForEvent('load');
    await page.click('#move-reload');
    await loaded;
    await ready(page);
    const back = await attempt(page);
    assert.equal(back.key, key);
    assert.equal(back.state, 'pending', 'the reload came before the answer');
    assert.equal(posts.length, 1, 'the request went out before the reload');
    const [cut] = await tries(page);
    assert.equal(cut.key, key);
    assert.equal(cut.status, undefined, 'the timeline shows the try cut off by the reload');
    assert.equal(await page.getAttribute('#outcome', 'data-kind'), 'info', 'the page explains the reload');

    const out = await pay(page);
    assert.equal(out.kind, 'paid', `outcome: ${out.title} ${out.text}`);
    assert.equal(out.key, key);
    assert.ok(posts.every((p) => p.key === key));
    assert.equal((await ledger()).count, 1);
  }));
