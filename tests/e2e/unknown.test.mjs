// Retries exhausted: the outcome is unknown, the key is kept, and the next Pay
// resumes with the same key and charges once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, pay, armFault, attempt, tries } from './harness.mjs';

// P-outcome-unknown-keeps-key: 503 on every try: outcome unknown, pending, the key kept
// P-unknown-resumes: the next Pay in the page resumes with the same key and charges once
test('503 on every try: outcome unknown, key kept; the next Pay resumes it and charges once', { timeout: 90000 }, () =>
  scenario('outcome-unknown', { failedLoads: ['503'] }, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    const { key } = await attempt(page);
    await armFault(page, 'fail-before-commit', 6);        // the first try and all five retries
    const lost = await pay(page);
    assert.equal(lost.kind, 'unknown', `outcome: ${lost.title} ${lost.text}`);
    const pending = await attempt(page);
    assert.equal(pending.state, 'pending');
    assert.equal(pending.key, key, 'the key is kept');
    assert.equal((await tries(page)).length, 6);
    assert.equal((await ledger()).count, 0);

    const paid = await pay(page);
    assert.equal(paid.kind, 'paid', `outcome: ${paid.title} ${paid.text}`);
    assert.equal(paid.key, key, 'the next Pay resumes with the same key');
    assert.equal(posts.length, 7);
    assert.ok(posts.every((p) => p.key === key));
    const l = await ledger();
    assert.equal(l.count, 1);
    assert.equal(l.charges[0].key, key);
  }));
