// Benchmarks for `make bench`. Every figure is paired with a baseline measured in the same run,
// interleaved where it can be, so the ratios survive a noisy machine better than absolute times.
import { execFileSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { launchChromium, startServer } from '../tests/support/reference.mjs';

const out = process.argv[2] ?? 'target/bench/results.md';
const CLIENT_ROUNDS = 300;
const INIT_ROUNDS = 100; // a fresh page each
const TRACE_ROUNDS = 100;
const IDB_ROUNDS = 100; // of 20 calls each

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const p95 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length * 0.95)]; };
const ratio = (a, b) => (a / b).toFixed(2);

/** scripts/size.sh's table (the same figures `make pack` checks), even when over budget. */
function sizes() {
  try {
    return execFileSync('bash', ['scripts/size.sh'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    if (e.stdout) return `${e.stdout}${e.stderr}`;
    throw e;
  }
}

/**
 * `twiggy top` of the release wasm with its names kept: wasm-bindgen's output of the same
 * cargo build that `make build` packed, optimised with the same wasm-opt flags plus -g.
 */
function twiggyTop() {
  const dir = 'target/bench/names';
  mkdirSync(dir, { recursive: true });
  execFileSync('wasm-bindgen', ['target/wasm-release/wasm32-unknown-unknown/release/idemkey.wasm', '--target', 'web',
    '--out-dir', dir]);
  const flags = readFileSync('Cargo.toml', 'utf8').match(/^wasm-opt = \[(.*)\]$/m)[1]
    .split(',').map((f) => JSON.parse(f.trim()));
  const named = `${dir}/idemkey_bg.names.wasm`;
  execFileSync('node_modules/.bin/wasm-opt', [...flags, '-g', `${dir}/idemkey_bg.wasm`, '-o', named]);
  const top = execFileSync('twiggy', ['top', '-n', '30', named], { encoding: 'utf8' });
  return { top, shipped: statSync('pkg/idemkey_bg.wasm').size, named: statSync(named).size };
}

async function clientOverhead(url) {
  const browser = await launchChromium();
  try {
    const errors = [];
    const open = async (path) => {
      const page = await browser.newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${url}/${path}`);
      await page.waitForFunction(() => window.benchReady === true);
      return page;
    };
    const page = await open('index.html');
    const r = await page.evaluate((n) => window.runBench(n), CLIENT_ROUNDS);
    r.trace = await page.evaluate((n) => window.runTrace(n), TRACE_ROUNDS);
    r.idb = await page.evaluate((n) => window.runIdbSteps(n), IDB_ROUNDS);
    await page.close();
    r.init = [];
    r.bytes = [];
    for (let round = 0; round < INIT_ROUNDS; round++) {
      const p = await open('init.html');
      const t = await p.evaluate((i) => window.runInit(i), round);
      await p.close();
      r.init.push(t.init);
      r.bytes.push(t.bytes);
    }
    if (errors.length) throw new Error(`bench page errors: ${errors.join('; ')}`);
    return r;
  } finally {
    await browser.close();
  }
}

const server = await startServer(['--static', 'bench/www', '--pkg', 'pkg', '--provider-latency-ms', '0'],
  { stderr: openSync('target/bench/server.log', 'w') });
const { url } = server;
try {
  const s = sizes();
  const tw = twiggyTop();
  const c = await clientOverhead(url);
  const row = (name, xs, base, digits = 2) => `| ${name} | ${median(xs).toFixed(digits)} | ${p95(xs).toFixed(digits)} | ${
    base ? ratio(median(xs), median(base)) : '1.00'} | ${base ? ratio(p95(xs), p95(base)) : '1.00'} |`;
  const lines = [
    `# idemkey benchmarks`,
    ``,
    `Run: ${new Date().toISOString()} on ${process.platform}/${process.arch}, node ${process.version}.`,
    `Command: \`make bench\`. Baselines run in the same page, interleaved with the measured case`,
    `(which of the two goes first alternates); on a shared machine read the ratios, not the times.`,
    ``,
    `## Size (gzip -9, \`scripts/size.sh\`, what \`make pack\` checks)`,
    ``,
    '```',
    s.trimEnd(),
    '```',
    ``,
    `## Where the bytes are: \`twiggy top\` of the release wasm with names kept`,
    ``,
    `The shipped pkg/idemkey_bg.wasm is ${tw.shipped} bytes; the same build optimised with -g (names kept)`,
    `is ${tw.named} bytes, the difference being the name section.`,
    ``,
    '```',
    tw.top.trimEnd(),
    '```',
    ``,
    `## Client overhead in headless Chromium (${CLIENT_ROUNDS} rounds, provider latency 0)`,
    ``,
    `| case | median ms | p95 ms | ratio (median) | ratio (p95) |`,
    `| --- | ---: | ---: | ---: | ---: |`,
    row('baseline: fetch POST with a fresh crypto.randomUUID() key', c.fetch),
    row('idemkey: Checkout.open + submit + finish', c.idem, c.fetch),
    row('baseline: navigator.locks.request + localStorage.getItem + JSON.parse', c.readBase, null, 3),
    row('idemkey: submit on a succeeded checkout (fromCache, no request)', c.cached, c.readBase, 3),
    row('baseline: fetch the wasm as an ArrayBuffer', c.bytes),
    row(`idemkey: init() (fetch, streaming compile, instantiate; ${INIT_ROUNDS} fresh pages, a URL of its own each)`, c.init, c.bytes),
    ``,
    `## Where a checkout's time goes (${TRACE_ROUNDS} rounds of open + submit + finish, timed apart from the ratios)`,
    ``,
    `Marks from the page's own \`navigator.locks.request\`, \`fetch\` and \`Response.text\`, wrapped for this pass only.`,
    `open: \`Checkout.open\` itself; lock: until the scope's Web Lock is granted; stored before the request:`,
    `IndexedDB's read and the pending write, until \`fetch\` is called; request: until the answer's body is`,
    `read; after the answer: until \`submit()\` resolves. All but "request" is what idemkey adds to a fetch.`,
    ``,
    `| phase | median ms | p95 ms |`,
    `| --- | ---: | ---: |`,
    ...Object.entries(c.trace).map(([phase, xs]) => `| ${phase} | ${median(xs).toFixed(2)} | ${p95(xs).toFixed(2)} |`),
    ``,
    `## IndexedDB before the request: two transactions, or one (${IDB_ROUNDS} interleaved rounds of 20)`,
    ``,
    `A submit reads the scope's record, then stores it pending, in two transactions. One readwrite`,
    `transaction that reads, decides and writes is what a merge of the two would cost.`,
    ``,
    `| case | median ms | p95 ms | ratio (median) | ratio (p95) |`,
    `| --- | ---: | ---: | ---: | ---: |`,
    row('baseline: one readwrite transaction (get, then put)', c.idb.one, null),
    row("idemkey: a read, then a readwrite put", c.idb.two, c.idb.one),
    ``,
  ];
  writeFileSync(out, lines.join('\n'));
} finally {
  await server.stop();
}
