// The two faults the checks rely on, seen from the server's side: a request whose connection
// closes right after its last byte, and two requests that are in the server at the same time.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { sendAndDrop, sendTogether } from '../lib/http.mjs';

const listen = (server) => new Promise((r) => server.listen(0, '127.0.0.1', () => r(server.address().port)));

test('a dropped request reaches the server whole, and the connection is closed before any answer', { timeout: 10000 }, async () => {
  let resolveSeen;
  const seen = new Promise((r) => { resolveSeen = r; });
  const server = net.createServer((s) => {
    let bytes = '';
    s.on('data', (d) => { bytes += d; });
    // The server never writes: the client's close (end of stream) is all it sees after the request.
    s.on('end', () => resolveSeen(bytes));
  });
  const port = await listen(server);
  const body = JSON.stringify({ amount: 100, currency: 'usd' });
  const r = await sendAndDrop({
    url: `http://127.0.0.1:${port}/api/charges`, method: 'POST', body, timeoutMs: 5000,
    headers: [['Idempotency-Key', 'k-1'], ['Content-Type', 'application/json']],
  });
  const bytes = await seen;
  server.close();
  assert.equal(r.error, undefined);
  assert.match(bytes, /^POST \/api\/charges HTTP\/1\.1\r\n/);
  assert.match(bytes, /\r\nIdempotency-Key: k-1\r\n/);
  assert.match(bytes, new RegExp(`\r\nContent-Length: ${body.length}\r\n`));
  assert.ok(bytes.endsWith(`\r\n\r\n${body}`), bytes);
});

test('two requests sent together are both in the server before either is answered', { timeout: 10000 }, async () => {
  const waiting = [];
  // Answers only once two requests are waiting: sent one after the other, they would time out.
  const server = http.createServer((req, res) => {
    waiting.push(res);
    if (waiting.length === 2) for (const w of waiting) w.end('both');
  });
  const port = await listen(server);
  const req = { url: `http://127.0.0.1:${port}/`, method: 'POST', headers: [], body: '{}', timeoutMs: 3000 };
  const answers = await sendTogether([req, req]);
  server.close();
  assert.deepEqual(answers.map((a) => [a.status, a.body]), [[200, 'both'], [200, 'both']]);
});
