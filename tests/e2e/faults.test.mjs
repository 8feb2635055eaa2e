// Each injected fault: one charge, and the timeline shows the retry (and the
// replay where the server had already committed the charge).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, pay, armFault, attempt, tries, assertOneSequence } from './harness.mjs';

// failedLoads: what Chromium logs for the injected fault (a timed-out fetch is aborted silently).
const MODES = [
  { mode: 'drop-after-commit', reason: 'network-error', committed: true, failedLoads: ['dropped'] },
  { mode: 'error-after-commit', reason: 'status-502', status: '502', committed: true, failedLoads: ['502'] },
  { mode: 'fail-before-commit', reason: 'status-503', status: '503', committed: false, failedLoads: ['503'] },
  { mode: 'delay-after-commit', reason: 'timeout', committed: true, failedLoads: [] },
];

for (const { mode, reason, status, committed, failedLoads } of MODES) {
  test(`fault ${mode}: one charge, the retry${committed ? ' and the replay' : ''} in the timeline`, { timeout: 60000 }, () =>
    scenario(`fault-${mode}`, { failedLoads }, async ({ openPage, ledger, posts }) => {
      const page = await openPage();
      const { key } = await attempt(page);
      await armFault(page, mode);
      const out = await pay(page);
      assert.equal(out.kind, 'paid', `outcome: ${out.title} ${out.text}`);
      assert.equal(out.key, key);

      const rows = await tries(page);
      assert.ok(rows.length >= 2, rows.length === 1 && rows[0].replayed === 'true'
        ? 'one try, answered with a replay: the browser itself re-sent the request on a reused keep-alive '
          + 'connection, below fetch, so the module never saw the fault (the server should not keep '
          + 'connections alive when it injects faults)'
        : `at least two tries, saw ${rows.length}`);
      assert.equal(rows[0].try, '1');
      assert.equal(rows[0].key, key);
      assert.equal(rows[0].retryReason, reason, 'the first try is retried for the injected reason');
      if (status) assert.equal(rows[0].status, status);
      const last = rows[rows.length - 1];
      assert.ok(['200', '201'].includes(last.status), `last try succeeded, saw ${last.status}`);
      assert.ok(rows.every((r) => r.key === key), 'every try carries the same key');
      if (committed) {
        assert.equal(last.replayed, 'true', 'the server replayed the committed charge');
        assert.equal(out.replayed, 'true');
      } else {
        assert.notEqual(last.replayed, 'true', 'nothing was committed, so nothing to replay');
      }

      assertOneSequence(posts, rows.length);
      const l = await ledger();
      assert.equal(l.count, 1, 'one charge');
      assert.equal(l.charges[0].key, key);
      assert.equal((await attempt(page)).state, 'succeeded');
      await page.waitForFunction(() => document.querySelector('#order-charges').textContent === '1');
    }));
}
