// The reference server honours the key: every check passes, with a ledger and without one,
// with bare keys and with the IETF draft's quoted ones.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { startServer } from '../../tests/support/reference.mjs';
import { runCli } from './support.mjs';

const AGAINST_REFERENCE = fileURLToPath(new URL('../against-reference.mjs', import.meta.url));

let server;
before(async () => { server = await startServer(['--provider-latency-ms', '100']); });
after(() => server?.stop());

test('one command runs every check against the reference server and all pass', async () => {
  const child = spawn(process.execPath, [AGAINST_REFERENCE], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const code = await new Promise((r) => child.on('exit', r));
  assert.equal(code, 0, out + err);
  const rows = out.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| check') && !l.startsWith('| ---'));
  assert.equal(rows.length, 10, out);
  for (const row of rows) assert.match(row.split(' | ')[1], /^PASS( \(reported\))?$/, row);
  assert.match(out, /All 8 checks idemkey depends on passed\./);
  assert.match(out, /the other got 409 with Retry-After|the second waited and got the same answer/);
  assert.match(out, /refused with 422/);
});

test('without a ledger and with sf-string keys every check passes, the counts inferred and marked so', async () => {
  const r = await runCli([`${server.url}/api/charges`, '--key-format', 'sf-string', '--scope-header', 'X-Customer-Id', '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const results = JSON.parse(r.stdout).results;
  for (const x of results) assert.equal(x.verdict, 'pass', `${x.id}: ${x.note}`);
  const inferred = results.filter((x) => x.inferred).map((x) => x.id);
  assert.deepEqual(inferred, ['replay', 'concurrent', 'other-payload', 'no-key', 'malformed-key', 'over-long-key', 'lost-answer']);
  assert.match(results.find((x) => x.id === 'lost-answer').note, /the retry was marked idempotent-replayed: true \(no --ledger\)/);
});

test('a payload the endpoint refuses stops the run after one request with exit 2, naming the answer', async () => {
  const r = await runCli([`${server.url}/api/charges`, '--payload', '{"amount":"ten","currency":"usd"}']);
  assert.equal(r.code, 2, r.stdout);
  assert.match(r.stderr, /the first charge with a fresh key was answered 400 application\/problem\+json .*the payload \(--payload\) or the headers \(-H\) are not what this endpoint accepts/);
});

test('another customer given by its own headers (--other-customer) is scoped apart as well', async () => {
  const charges = `${server.url}/api/charges`;
  const r = await runCli([charges, '-H', 'X-Customer-Id: shop-a', '--other-customer', 'X-Customer-Id: shop-b', '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(JSON.parse(r.stdout).results.find((x) => x.id === 'customers').verdict, 'pass');
});
