// A third-party middleware from the registry (express-idempotency 1.0.6 on Express 4.22.3,
// pinned in fixtures/express-idempotency): its results, recorded as measured. A change in
// them, either way, fails this test, so the docs' table of it stays true.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, startFixture, verdicts } from './support.mjs';

let server;
before(async () => { server = await startFixture('express-idempotency/server.mjs', { env: { NODE_ENV: 'production' } }); });
after(() => server?.stop());

test('express-idempotency: replays, in-progress and other payloads honoured; no key, empty and long keys charged; keys not scoped', async () => {
  const charges = `${server.url}/api/charges`;
  const r = await runCli([charges, '--ledger', charges, '--scope-header', 'X-Customer-Id', '--json']);
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(verdicts(r.stdout), {
    replay: 'pass', concurrent: 'pass', 'other-payload': 'pass', 'no-key': 'fail', 'malformed-key': 'fail',
    'over-long-key': 'fail', 'lost-answer': 'pass', customers: 'fail', 'problem-json': 'fail', 'replay-marker': 'fail',
  });
  const notes = Object.fromEntries(JSON.parse(r.stdout).results.map((x) => [x.id, x.note]));
  assert.equal(notes.concurrent, 'the other got 409 without Retry-After');
  assert.equal(notes['other-payload'], 'refused with 417 (final for idemkey; the draft asks 422)');
  assert.equal(notes.customers, 'customer B got customer A\'s stored answer: keys are not scoped per customer');
  assert.equal(notes['problem-json'], '3 of 3 error answers are not application/problem+json');
});
