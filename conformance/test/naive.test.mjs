// A backend with no idempotency at all: the runner must fail it, name what fails, and exit 1.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, startFixture, verdicts } from './support.mjs';

let naive;
before(async () => { naive = await startFixture('naive.mjs'); });
after(() => naive?.stop());

test('a backend that ignores the key fails every check the module depends on but the customers one, and exits 1', async () => {
  const charges = `${naive.url}/api/charges`;
  const r = await runCli([charges, '--ledger', charges, '--scope-header', 'X-Customer-Id', '--json']);
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(verdicts(r.stdout), {
    replay: 'fail', concurrent: 'fail', 'other-payload': 'fail', 'no-key': 'fail', 'malformed-key': 'fail',
    'over-long-key': 'fail', 'lost-answer': 'fail',
    // Every request is a new charge, so one customer never gets another's: that check holds.
    customers: 'pass',
    'problem-json': 'unknown', 'replay-marker': 'fail',
  });
  const notes = Object.fromEntries(JSON.parse(r.stdout).results.map((x) => [x.id, x.note]));
  assert.match(notes.replay, /second body differs from the first \(id: "ch_\d+" vs "ch_\d+"\): the request ran again/);
  assert.match(notes.concurrent, /the request ran twice/);
  assert.match(notes['lost-answer'], /the work was done 2 times/);
  assert.match(notes['no-key'], /accepted \(201\), not refused with a 4xx/);
});

test('the table names each failing check and why, and says the module cannot rely on the backend', async () => {
  const charges = `${naive.url}/api/charges`;
  const r = await runCli([charges, '--ledger', charges]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /^\| same key and payload twice \| FAIL \| .*idemkey re-sends the same key/m);
  assert.match(r.stdout, /^\| two customers, one key \| NOT RUN \|/m);
  assert.match(r.stdout, /7 of 7 checks idemkey depends on did not pass:/);
  for (const id of ['replay', 'concurrent', 'other-payload', 'no-key', 'malformed-key', 'over-long-key', 'lost-answer']) {
    assert.match(r.stdout, new RegExp(`^  - ${id} \\(fail\\): `, 'm'), id);
  }
});

test('without a ledger, a lost answer cannot be judged: the check says so and the run still exits 1', async () => {
  const r = await runCli([`${naive.url}/api/charges`, '--json']);
  assert.equal(r.code, 1, r.stderr);
  const lost = JSON.parse(r.stdout).results.find((x) => x.id === 'lost-answer');
  assert.equal(lost.verdict, 'unknown');
  assert.match(lost.note, /without --ledger \(or a replay marker\) the runner cannot tell/);
  assert.equal(verdicts(r.stdout).replay, 'fail', 'the differing answers show the second charge without a ledger');
});

test('a ledger URL that does not count is a set-up error (exit 2) before any charge is sent', async () => {
  const charges = `${naive.url}/api/charges`;
  for (const [ledger, message] of [
    [`${naive.url}/api/nowhere`, /--ledger: the ledger http:\S+\/api\/nowhere answered 404, not 200/],
    [charges, /--ledger: the ledger's charges\.0 is not a number or an array/],
  ]) {
    const before = await (await fetch(charges)).json();
    const r = await runCli([charges, '--ledger', ledger, '--ledger-count', ledger === charges ? 'charges.0' : 'count']);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, message);
    assert.equal((await (await fetch(charges)).json()).count, before.count, 'no charge was sent');
  }
});
