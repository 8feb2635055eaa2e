// The naive checkout (no key, retries on error) under drop-after-commit makes
// two charges: proof that these tests can see a duplicate when there is one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, seq, nextOutcome, armFault, tries } from './harness.mjs';

test('the naive checkout under drop-after-commit charges twice', { timeout: 60000 }, () =>
  scenario('naive-duplicate', { failedLoads: ['dropped'] }, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    await armFault(page, 'drop-after-commit');
    const since = await seq(page, '#naive-outcome');
    await page.click('#naive-pay');
    const out = await nextOutcome(page, since, '#naive-outcome');
    assert.equal(out.kind, 'duplicate', `outcome: ${out.title} ${out.text}`);
    assert.equal(out.charges, '2');
    const l = await ledger();
    assert.equal(l.count, 2, 'two charges for one order');
    assert.ok(l.charges.every((c) => c.key == null), 'naive charges carry no key');
    assert.equal(posts.length, 0, 'the idemkey checkout sent nothing');
    // Two charges from the naive checkout's retry, or from Chromium re-sending the
    // POST itself on a reused keep-alive connection: either way, no key, two charges.
    assert.ok((await tries(page, '#naive-timeline')).length >= 1);
    await page.waitForFunction(() => document.querySelector('#naive-charges').textContent === '2');
  }));
