// The bad-input storm: hostile requests of every kind against the real server, with
// valid charges and replays interleaved and slowloris connections held throughout.
//
//   node tests/storm/run.mjs [--requests 2000] [--seed 1] [--concurrency 8] [--holders 64]
//                            [--store sqlite|postgres] [--skip-fd-limit]
//
// --store postgres runs the server on a PostgreSQL the storm starts (and stops); the
// fd-limit phase always runs on SQLite.
//
// Fails (exit 1) on any 5xx, a panic in the server's log, a dead server, a lost or
// doubled valid charge, a health probe slower than 1 s (any other valid request: 5 s), a peak RSS over 200 MiB, a
// refusal without a problem+json body (but hyper's own refusals of broken framing), an answer missing or outside what the variant
// allows, or a starving connection the server never ends. Prints a table by status class.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { KINDS, pick } from './cases.mjs';
import { Charges } from './charges.mjs';
import { fdLimitPhase } from './fdlimit.mjs';
import { Failures, printTables } from './report.mjs';
import { panics, startStormServer } from './server.mjs';
import { startPostgres } from '../support/postgres.mjs';
import { startProbe } from './probe.mjs';
import { holdSlowloris } from './slowloris.mjs';
import { exchange, finals, isProblem } from './wire.mjs';

const { values: opt } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    seed: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '8' },
    holders: { type: 'string', default: '64' },
    'skip-fd-limit': { type: 'boolean', default: false },
    store: { type: 'string', default: 'sqlite' },
  },
});
const REQUESTS = Number(opt.requests);
const SEED = Number(opt.seed);
// A valid request must not wait behind the slowloris connections: the probe, in its own
// thread, gets 1 s at most. The storm's own valid requests share an event loop with
// megabytes of hostile input (it runs hundreds of ms late on a loaded machine), and a
// charge also waits for its durable commit behind the other charges: 5 s at most for them.
const VALID_MAX_MS = 1000;
const STORM_VALID_MAX_MS = 5000;
const RSS_MAX_KIB = 200 * 1024;
// Server head and body timeouts are 10 s: a starving connection older than this was never ended.
const HOLD_MAX_MS = 12500;
const SERVER_ARGS = ['--provider-latency-ms', '2', '--log-level', 'info'];

/** mulberry32: a small seeded PRNG, so a failing run can be replayed with its seed. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const failures = new Failures();
// How late the storm's own event loop ran: a slow answer that is only the client being busy shows here.
const lag = monitorEventLoopDelay({ resolution: 20 });
lag.enable();
const t0 = performance.now();
if (!['sqlite', 'postgres'].includes(opt.store)) throw new Error(`--store must be sqlite or postgres, not ${opt.store}`);
const pg = opt.store === 'postgres' ? await startPostgres() : null;
process.on('exit', () => pg?.stop());
const server = await startStormServer({ args: SERVER_ARGS, databaseUrl: pg?.url });
const charges = new Charges(`storm-${SEED}-${process.pid}`, prng(SEED ^ 0x5eed));
const counts = {};
const latencies = [];
const slowSince = performance.now();
const slow = holdSlowloris(server.addr, Number(opt.holders), `${charges.prefix}-slow`);
// Its own server, idle but for stalled bodies: it runs beside the storm.
const fdPhase = opt['skip-fd-limit'] ? null : fdLimitPhase(SERVER_ARGS);

// A probe that keeps asking while the slowloris connections are held.
const probe = startProbe(server.addr);

const plan = (() => {
  const rng = prng(SEED);
  return Array.from({ length: REQUESTS }, () => ({ ...pick(rng), seed: Math.floor(rng() * 2 ** 32) }));
})();

function tally(kind, cls) {
  counts[kind] ??= { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, none: 0 };
  counts[kind][cls]++;
}

async function runOne({ kind, variant, seed }) {
  const ctx = charges.context(prng(seed));
  const built = variant.build(ctx);
  const x = await exchange(server.addr, built.parts, { halfClose: built.halfClose, timeoutMs: 20000 });
  const name = `${kind}/${variant.name}`;
  const got = finals(x);
  if (got.length === 0) tally(kind, 'none');
  for (const r of got) tally(kind, `${Math.floor(r.status / 100)}xx`);
  for (const r of got) {
    if (r.status >= 500) failures.add('5xx', name, `${r.status} ${r.body.toString('utf8', 0, 200)}`);
    if (!variant.expect.includes(r.status)) failures.add('status outside what the variant allows', name, `${r.status} (allowed ${variant.expect.join('/')})`);
    // hyper's own refusals of broken framing have an empty body; every other refusal is a problem.
    const hypers = variant.hyper && r.body.length === 0;
    if (r.status >= 400 && !isProblem(r) && !hypers) failures.add('refusal without a problem+json body', name, `${r.status} content-type=${r.headers['content-type'] ?? '-'} body=${r.body.length} bytes`);
  }
  if (got.length < variant.answers) failures.add('no answer', name, `${got.length} of ${variant.answers} answers, connection ${x.closedBy}${x.error ? ` (${x.error})` : ''}`);
  if (variant.valid) {
    latencies.push(x.ms);
    if (x.ms > STORM_VALID_MAX_MS) failures.add('valid request slower than 5 s', name, `${Math.round(x.ms)} ms`);
  }
  if (built.charge) {
    const problem = charges.settle(built.charge, got[0], { replay: variant.replay });
    if (problem) failures.add(problem.what, name, problem.detail);
  }
}

let next = 0;
await Promise.all(Array.from({ length: Number(opt.concurrency) }, async () => {
  while (next < plan.length) await runOne(plan[next++]);
}));
const stormMs = performance.now() - t0;

// Hold on until the first starving connections have outlived every server timeout.
while (performance.now() - slowSince < HOLD_MAX_MS + 200) await new Promise((r) => setTimeout(r, 100));
const probes = await probe.stop();
for (const p of probes) {
  latencies.push(p.ms);
  if (p.status !== 200) failures.add('probe not answered 200', 'GET /healthz', String(p.status));
  else if (p.ms > VALID_MAX_MS) failures.add('valid request slower than 1 s', 'probe GET /healthz', `${Math.round(p.ms)} ms`);
}
const held = slow.stop();
for (const c of held.open) {
  if (c.ms >= HOLD_MAX_MS) failures.add('starving connection never ended by the server', `slowloris/${c.kind}`, `open for ${Math.round(c.ms)} ms`);
}
for (const e of held.ended) {
  if (e.kind !== 'idle' && e.status !== null && (e.status !== 408 || !e.problem)) {
    failures.add('starving connection ended with a wrong answer', `slowloris/${e.kind}`, `${e.status}${e.problem ? '' : ' (no problem body)'}`);
  }
}

if (!server.alive()) failures.add('server died', 'storm', server.log().slice(-2000));
else {
  for (const p of await charges.verifyLedger(server.addr)) failures.add(p.what, 'ledger', p.detail);
}
for (const l of panics(server.log())) failures.add('panic in the server log', 'log', l);
const peak = server.peakRssKiB();
if (!(peak <= RSS_MAX_KIB)) failures.add('peak RSS over 200 MiB', 'server', `${peak} KiB`);
await server.stop();
pg?.stop();

const fd = await fdPhase;
for (const f of fd?.failures ?? []) failures.add(f.what, 'fd-limit', f.detail);

lag.disable();
printTables({ counts, failures, requests: REQUESTS, seed: SEED, stormMs, latencies, peakRssKiB: peak, held, fd: fd?.figures,
  charges: charges.summary(), clientLagMs: lag.max / 1e6, probeMaxMs: Math.max(0, ...probes.map((p) => p.ms)), probes: probes.length });
console.log(`storm (${opt.store}): ${((performance.now() - t0) / 1000).toFixed(1)} s in all`);
process.exit(failures.size() ? 1 : 0);

export { KINDS };
