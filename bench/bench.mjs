// Benchmarks for `make bench`. Every figure is paired with a baseline measured in the same run,
// interleaved where it can be, so the ratios survive a noisy machine better than absolute times.
import { execFileSync } from 'node:child_process';
import { openSync, writeFileSync, statSync } from 'node:fs';
import { launchChromium, startServer } from '../tests/support/reference.mjs';

const out = process.argv[2] ?? 'target/bench/results.md';
const CLIENT_ROUNDS = 150;
const LOAD_REQUESTS = 500; // per round
const LOAD_ROUNDS = 3; // the cases take turns, round after round; the median round is reported
const LOAD_CONCURRENCY = 16;

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const p95 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length * 0.95)]; };
const kib = (n) => (n / 1024).toFixed(1);

function sizes() {
  const files = ['pkg/idemkey_bg.wasm', 'pkg/idemkey.js'];
  const rows = files.map((f) => {
    return { f, raw: statSync(f).size, gz: execFileSync('gzip', ['-9', '-c', f]).length };
  });
  const total = rows.reduce((a, r) => a + r.gz, 0);
  return { rows, total };
}

async function clientOverhead(url) {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/index.html`);
    await page.waitForFunction(() => window.benchReady === true);
    const r = await page.evaluate((n) => window.runBench(n), CLIENT_ROUNDS);
    if (errors.length) throw new Error(`bench page errors: ${errors.join('; ')}`);
    return r;
  } finally {
    await browser.close();
  }
}

async function load(url, makeRequest) {
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < LOAD_REQUESTS) {
      const i = next++;
      const res = await fetch(url, makeRequest(i));
      await res.arrayBuffer();
      if (res.status >= 500) throw new Error(`server answered ${res.status}`);
    }
  }
  await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
  return LOAD_REQUESTS / ((performance.now() - started) / 1000);
}

async function serverThroughput(url) {
  const body = JSON.stringify({ amount: 1999, currency: 'EUR', items: [{ sku: 'mug', qty: 1 }] });
  const post = (key) => ({
    method: 'POST', body,
    headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-customer-id': 'bench' },
  });
  const warm = await fetch(`${url}/api/charges`, post('bench-replay-key'));
  if (warm.status !== 201) throw new Error(`first charge answered ${warm.status}`);
  const health = [], fresh = [], replay = [];
  for (let round = 0; round < LOAD_ROUNDS; round++) {
    health.push(await load(`${url}/healthz`, () => ({})));
    fresh.push(await load(`${url}/api/charges`, (i) => post(`bench-${round}-${i}-${Math.random()}`)));
    replay.push(await load(`${url}/api/charges`, () => post('bench-replay-key')));
  }
  return { health: median(health), fresh: median(fresh), replay: median(replay) };
}

const server = await startServer(['--static', 'bench/www', '--pkg', 'pkg', '--provider-latency-ms', '0'],
  { stderr: openSync('target/bench/server.log', 'w') });
const { url } = server;
try {
  const s = sizes();
  const c = await clientOverhead(url);
  const t = await serverThroughput(url);
  const lines = [
    `# idemkey benchmarks`,
    ``,
    `Run: ${new Date().toISOString()} on ${process.platform}/${process.arch}, node ${process.version}.`,
    `Command: \`make bench\`. Baselines run in the same process, interleaved with the measured case.`,
    ``,
    `## Size (gzip -9), budget 60 KiB`,
    ``,
    `| file | raw KiB | gzip KiB |`,
    `| --- | ---: | ---: |`,
    ...s.rows.map((r) => `| ${r.f} | ${kib(r.raw)} | ${kib(r.gz)} |`),
    `| total | | ${kib(s.total)} (${((s.total / (60 * 1024)) * 100).toFixed(0)}% of budget) |`,
    ``,
    `## Client overhead in headless Chromium (${CLIENT_ROUNDS} rounds, provider latency 0)`,
    ``,
    `| case | median ms | p95 ms | ratio to baseline (median) |`,
    `| --- | ---: | ---: | ---: |`,
    `| baseline: fetch POST with a fresh crypto.randomUUID() key | ${median(c.fetch).toFixed(2)} | ${p95(c.fetch).toFixed(2)} | 1.00 |`,
    `| idemkey: Checkout.open + submit + finish | ${median(c.idem).toFixed(2)} | ${p95(c.idem).toFixed(2)} | ${(median(c.idem) / median(c.fetch)).toFixed(2)} |`,
    `| baseline: navigator.locks.request + localStorage.getItem + JSON.parse | ${median(c.readBase).toFixed(3)} | ${p95(c.readBase).toFixed(3)} | 1.00 |`,
    `| idemkey: submit on a succeeded checkout (fromCache, no request) | ${median(c.cached).toFixed(3)} | ${p95(c.cached).toFixed(3)} | ${(median(c.cached) / median(c.readBase)).toFixed(2)} |`,
    ``,
    `## Server throughput (${LOAD_ROUNDS} rounds of ${LOAD_REQUESTS} requests per case, ${LOAD_CONCURRENCY} concurrent, loopback, synchronous=FULL; median round)`,
    ``,
    `| case | requests/s | ratio to GET /healthz |`,
    `| --- | ---: | ---: |`,
    `| baseline: GET /healthz | ${t.health.toFixed(0)} | 1.00 |`,
    `| POST /api/charges, new key each (commit + provider call) | ${t.fresh.toFixed(0)} | ${(t.fresh / t.health).toFixed(2)} |`,
    `| POST /api/charges, replay of one key | ${t.replay.toFixed(0)} | ${(t.replay / t.health).toFixed(2)} |`,
    ``,
  ];
  writeFileSync(out, lines.join('\n'));
} finally {
  await server.stop();
}
