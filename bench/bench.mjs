// Benchmarks for `make bench`. Every figure is paired with a baseline measured in the same run,
// interleaved where it can be, so the ratios survive a noisy machine better than absolute times.
import { execFileSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { launchChromium, startServer } from '../tests/support/reference.mjs';

const out = process.argv[2] ?? 'target/bench/results.md';
const CLIENT_ROUNDS = 300;
const INIT_ROUNDS = 100; // a fresh page each
const TRACE_ROUNDS = 100;

// Medians and p95s of the finite times only: a phase of the trace whose mark never came is NaN.
const sorted = (xs) => xs.filter(Number.isFinite).sort((a, b) => a - b);
const median = (xs) => sorted(xs)[Math.floor(sorted(xs).length / 2)] ?? NaN;
const p95 = (xs) => sorted(xs)[Math.floor(sorted(xs).length * 0.95)] ?? NaN;
const ratio = (a, b) => (a / b).toFixed(2);
const ms = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

// The client's targets: the module's gzipped size, and its times against careful pages that
// do the same work without it.
const TARGET_KIB = 30;
const TARGET = { checkout: 1.10, cached: 1.20, init: 1.5 };

/** The calls `runCounts` counted, one row per kind of call and one column per phase. */
function countsTable(counts) {
  const phases = Object.keys(counts);
  const kinds = [...new Set(phases.flatMap((p) => Object.keys(counts[p])))].sort();
  return [
    `| call | ${phases.join(' | ')} |`,
    `| --- | ${phases.map(() => '---:').join(' | ')} |`,
    ...kinds.map((k) => `| ${k} | ${phases.map((p) => counts[p][k] ?? 0).join(' | ')} |`),
  ].join('\n');
}

/**
 * scripts/size.sh's table (the same figures `make pack` checks), with the target as its
 * budget: `met` is whether the sum is within it, as size.sh counts the bytes.
 */
function sizes() {
  const env = { ...process.env, BUDGET_KIB: String(TARGET_KIB) };
  try {
    const text = execFileSync('bash', ['scripts/size.sh'], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
    return { text, met: true };
  } catch (e) {
    if (e.stdout && e.status === 1 && /over budget/.test(e.stderr)) return { text: `${e.stdout}${e.stderr}`, met: false };
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
    r.counts = await page.evaluate(() => window.runCounts());
    await page.close();
    r.init = [];
    r.compile = [];
    for (let round = 0; round < INIT_ROUNDS; round++) {
      const p = await open('init.html');
      const t = await p.evaluate((i) => window.runInit(i), round);
      await p.close();
      r.init.push(t.init);
      r.compile.push(t.compile);
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
  const total = /^total\s+\d+\s+([\d.]+) KiB/m.exec(s.text)?.[1] ?? '?';
  // One line of the targets table: idemkey's figure, its baseline's, their ratio, the target.
  const met = (ok) => (ok ? '**met**' : '**not met**');
  const target = (name, xs, baseName, base, limit, digits = 2) => {
    const q = median(xs) / median(base);
    return `| ${name} | ${ms(median(xs), digits)} (${ms(p95(xs), digits)}) | ${baseName} | ${
      ms(median(base), digits)} (${ms(p95(base), digits)}) | ${q.toFixed(2)} (${ratio(p95(xs), p95(base))}) | ${
      limit ? `at most ${limit.toFixed(2)}x: ${met(q <= limit)}` : 'for reference' } |`;
  };
  const lines = [
    `# idemkey benchmarks`,
    ``,
    `Run: ${new Date().toISOString()} on ${process.platform}/${process.arch}, node ${process.version}.`,
    `Command: \`make bench\`. Baselines run in the same page and run, interleaved with the measured case`,
    `(the order of the cases changes every round); on a shared machine read the ratios, not the times.`,
    ``,
    `## The client against its targets (headless Chromium, ${CLIENT_ROUNDS} interleaved rounds, provider latency 0)`,
    ``,
    `Times in ms: median (p95); ratio: idemkey's median over its baseline's (p95 over p95). Each`,
    `case starts once the page holds and awaits no Web Lock, so none is timed with the work`,
    `another left running (an answer's write, \`finish()\`'s turn with the lock).`,
    `The careful page's code is bench/www/handwritten.js: one IndexedDB connection opened when`,
    `the page loads, a Web Lock per scope, \`crypto.randomUUID()\`; its checkout reads the record`,
    `and commits the pending key in one readwrite transaction before the request, hands the`,
    `answer back once its write is made, and holds the lock until that write has committed.`,
    ``,
    `| measure | idemkey | baseline | baseline ms | ratio | target |`,
    `| --- | ---: | --- | ---: | ---: | --- |`,
    `| size: wasm + JS, gzip -9 (\`scripts/size.sh\`) | ${total} KiB | | | | at most ${TARGET_KIB} KiB: ${met(s.met)} |`,
    target('`Checkout.open` + `submit` + `finish`', c.idem, 'careful page: Web Lock, pending key committed to IndexedDB, fetch, answer committed',
      c.hand, TARGET.checkout),
    target('`Checkout.open` + `submit` + `finish`', c.idem, 'bare `fetch` POST with a fresh `crypto.randomUUID()` key', c.fetch, null),
    target('`submit` with its answer stored (`fromCache`, per call, batches of 20)', c.cached,
      'careful page: Web Lock + IndexedDB read of the same record (key, status, body)', c.read, TARGET.cached, 3),
    target('`submit` with its answer stored (`fromCache`, per call, batches of 20)', c.cached,
      'the same IndexedDB read without the lock (idemkey gives an answer it stored itself from memory, once it has read the end marks)', c.alone, null, 3),
    target(`\`init()\` (median over ${INIT_ROUNDS} fresh pages, a URL of its own each)`, c.init,
      '`fetch` + `WebAssembly.compileStreaming` of the same bytes', c.compile, TARGET.init),
    ``,
    `Cases that found a Web Lock still held or asked for after 100 ms, and started anyway: ${c.notQuiet}.`,
    ``,
    `## Size (gzip -9, \`scripts/size.sh\` with the target of ${TARGET_KIB} KiB as its budget; \`make pack\` checks its own)`,
    ``,
    '```',
    s.text.trimEnd(),
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
    `## Where a checkout's time goes (${TRACE_ROUNDS} interleaved rounds of each, timed apart from the ratios)`,
    ``,
    `Marks from the page's own \`navigator.locks.request\`, \`fetch\` and the body's read (\`Response\`'s \`text\`,`,
    `\`json\` or \`arrayBuffer\`), wrapped for this pass only; a phase whose marks never came is n/a.`,
    `open: \`Checkout.open\` itself (the careful page has none); lock: until the scope's Web Lock is granted;`,
    `stored before the request: IndexedDB's read and the pending write, until \`fetch\` is called; request:`,
    `until the answer's body is read; after the answer: until the checkout resolves. The page's timer`,
    `counts in steps of 0.1 ms, so a median difference is one of those steps or more.`,
    ``,
    `| phase | idemkey median ms (p95) | careful page median ms (p95) | difference of medians |`,
    `| --- | ---: | ---: | ---: |`,
    ...Object.keys(c.trace.idemkey).map((phase) => {
      const [a, b] = [c.trace.idemkey[phase], c.trace['careful page'][phase]];
      return `| ${phase} | ${ms(median(a))} (${ms(p95(a))}) | ${ms(median(b))} (${ms(p95(b))}) | ${ms(median(a) - median(b))} |`;
    }),
    ``,
    `## What a checkout asks of the browser (counted in one checkout of each, not timed)`,
    ``,
    `idemkey's open + submit until it resolves, then what runs after (the answer's write, \`finish()\`);`,
    `the careful page's checkout until it resolves, then its answer's commit. What idemkey does more`,
    `is its cross-tab protocol: every stored record is copied to Web Storage, where \`open()\` and the`,
    `other tabs read it, and posted to the other tabs; \`finish()\` writes its mark there.`,
    ``,
    countsTable(c.counts),
    ``,
  ];
  writeFileSync(out, lines.join('\n'));
} finally {
  await server.stop();
}
