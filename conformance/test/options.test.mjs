// Wrong input to the runner: a clear error, exit 2, and not one request sent.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { countIn } from '../lib/http.mjs';
import { runCli } from './support.mjs';

// A listener that only counts connections: any request the runner sent would show here.
let listener;
let connections = 0;
let url;
let dir;
before(async () => {
  listener = createServer((s) => { connections += 1; s.destroy(); });
  await new Promise((r) => listener.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${listener.address().port}/api/charges`;
  dir = mkdtempSync(path.join(tmpdir(), 'conformance-'));
});
after(() => {
  listener.close();
  rmSync(dir, { recursive: true, force: true });
});

const refused = [
  [[], /the charge URL is missing/],
  [['not a url'], /the charge URL: "not a url" is not a URL/],
  [['ftp://127.0.0.1/x'], /is not http:\/\/ or https:\/\//],
  [['URL', 'URL'], /one charge URL only/],
  [['URL', '--frobnicate'], /unknown option --frobnicate/],
  [['URL', '-H', 'Authorization'], /-H takes 'Name: value', got "Authorization"/],
  [['URL', '-H', 'Bad Name: x'], /"Bad Name" is not a header name/],
  [['URL', '-H', 'Idempotency-Key: mine'], /-H Idempotency-Key: the runner sets this header itself/],
  [['URL', '--payload', '{amount:1}'], /--payload is not JSON/],
  [['URL', '--payload', '@/nonexistent/payload.json'], /--payload @\/nonexistent\/payload.json: cannot read the file \(ENOENT\)/],
  [['URL', '--payload', '[1,2]'], /--payload is not a JSON object: give --other-payload as well/],
  [['URL', '--other-payload', '{"amount":100,"currency":"usd"}'], /--other-payload must differ from --payload/],
  [['URL', '--method', 'GET'], /--method must be one of POST, PUT, PATCH, DELETE, got GET/],
  [['URL', '--key-format', 'quoted'], /--key-format must be plain or sf-string, got quoted/],
  [['URL', '--timeout-ms', '0'], /--timeout-ms takes a whole number of ms, got 0/],
  [['URL', '--timeout-ms'], /--timeout-ms needs a value/],
  [['URL', '--ledger-count', 'count'], /--ledger-count needs --ledger/],
  [['URL', '--ledger', 'nowhere'], /--ledger: "nowhere" is not a URL/],
  [['URL', '--scope-header', 'X Customer'], /is not a header name/],
  [['URL', '--scope-header', 'X-Customer-Id', '-H', 'x-customer-id: mine'], /-H x-customer-id: the runner sets this header itself/],
  [['URL', '--other-customer', 'Bearer b'], /--other-customer takes 'Name: value', got "Bearer b"/],
  [['URL', '--key-header', 'Idempotency Key'], /--key-header: "Idempotency Key" is not a header name/],
  [['URL', '-H', 'X-Token: a\u0001b'], /-H X-Token: the value has a control character/],
];

for (const [args, message] of refused) {
  test(`refused with a clear error and nothing sent: ${JSON.stringify(args)}`, async () => {
    const before = connections;
    const r = await runCli(args.map((a) => (a === 'URL' ? url : a)));
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
    assert.equal(connections, before);
  });
}

test('--payload @FILE reads the payload from a file; --plan says what would be sent and sends nothing', async () => {
  const file = path.join(dir, 'payload.json');
  writeFileSync(file, '{"total": 4200, "currency": "eur", "note": "x"}');
  const r = await runCli([url, '--payload', `@${file}`, '-H', 'Authorization: Bearer s3cret', '--plan']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /at most 20 POST requests, one at a time/);
  assert.match(r.stdout, /other payload: \{"total":4201,"currency":"eur","note":"x"\}/);
  assert.match(r.stdout, /headers: Authorization \(values not shown\)/);
  assert.doesNotMatch(r.stdout, /s3cret/);
  assert.equal(connections, 0);
});

test('a server that does not answer is a set-up error (exit 2) after one request, not a verdict', async () => {
  const r = await runCli([url.replace(/:\d+\//, ':1/')]);
  assert.equal(r.code, 2, r.stdout);
  assert.match(r.stderr, /the first charge with a fresh key was answered no answer: connection refused by 127\.0\.0\.1:1/);
  assert.doesNotMatch(r.stdout, /^\| check/m);
});

test('--ledger-count finds the count by a dotted path, else `count`, the array, or its one array', () => {
  assert.equal(countIn({ data: { total: 3 } }, 'data.total'), 3);
  assert.equal(countIn({ data: { rows: [1, 2] } }, 'data.rows'), 2);
  assert.equal(countIn({ data: { total: 'x' } }, 'data.total'), null);
  assert.equal(countIn({ count: 4, charges: [] }), 4);
  assert.equal(countIn([1, 2, 3]), 3);
  assert.equal(countIn({ customer: 'a', charges: [1] }), 1);
  assert.equal(countIn({ a: [], b: [] }), null);
  assert.equal(countIn('text'), null);
});
