// The declined test card: no charge, state failed; the next Pay with a good
// card starts a new attempt with a new key and charges once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, pay, attempt, pickCard } from './harness.mjs';

// P-new-key-after-failed: after a decline the next Pay sends a new key
test('declined card: no charge and state failed; a good card then charges once with a new key', { timeout: 60000 }, () =>
  scenario('declined', { failedLoads: ['402'] }, async ({ openPage, ledger, posts }) => {
    const page = await openPage();
    await pickCard(page, '4000000000000002');
    const declined = await pay(page);
    assert.equal(declined.kind, 'declined', `outcome: ${declined.title} ${declined.text}`);
    assert.equal(declined.status, '402');
    const failed = await attempt(page);
    assert.equal(failed.state, 'failed');
    assert.equal((await ledger()).count, 0, 'a declined card is not charged');
    assert.equal(posts.length, 1);
    const firstKey = posts[0].key;

    await pickCard(page, '4242424242424242');
    const paid = await pay(page);
    assert.equal(paid.kind, 'paid', `outcome: ${paid.title} ${paid.text}`);
    assert.equal(posts.length, 2);
    const secondKey = posts[1].key;
    assert.notEqual(secondKey, firstKey, 'the new attempt has a new key');
    assert.equal(paid.key, secondKey);
    const l = await ledger();
    assert.equal(l.count, 1, 'one charge');
    assert.equal(l.charges[0].key, secondKey);
    assert.equal((await attempt(page)).state, 'succeeded');
  }));
