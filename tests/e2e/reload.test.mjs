// A reload in the middle of a request keeps the key: paying again charges once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, ready, pay, seq, nextOutcome, armFault, attempt, CLIENT_TIMEOUT_MS } from './harness.mjs';

test('reload during a slow request, then Pay again: the same key, one charge', { timeout: 60000 }, () =>
  scenario('reload-slow', {}, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    const { key } = await attempt(page);
    await armFault(page, 'delay-after-commit');
    await page.click('#pay');
    await page.waitForSelector('#timeline li.try[data-try="1"]');
    await page.waitForTimeout(300);                      // the request is on the wire, the answer is seconds away
    assert.equal((await attempt(page)).state, 'pending');
    assert.ok(CLIENT_TIMEOUT_MS < 6000);

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

test('the "Reload mid-payment" move: the same key after the reload, one charge', { timeout: 60000 }, () =>
  scenario('reload-move', { providerLatencyMs: 800 }, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    const { key } = await attempt(page);
    const loaded = page.waitForEvent('load');
    await page.click('#move-reload');
    await loaded;
    await ready(page);
    const back = await attempt(page);
    assert.equal(back.key, key);
    assert.equal(await page.getAttribute('#outcome', 'data-kind'), 'info', 'the page explains the reload');

    const since = await seq(page);
    await page.click('#pay');
    const out = await nextOutcome(page, since);
    assert.equal(out.kind, 'paid', `outcome: ${out.title} ${out.text}`);
    assert.equal(out.key, key);
    assert.ok(posts.every((p) => p.key === key));
    assert.equal((await ledger()).count, 1);
  }));
