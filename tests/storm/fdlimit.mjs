// File descriptors run out: a server limited to NOFILE open files meets more stalled
// bodies than that. It must time the stalled bodies out, not spin on a failing
// accept, and serve a valid client once the stalled ones are gone. Two servers: one
// started with the low limit (its connection cap keeps accept from failing), and one
// whose limit is lowered under it after start, below its cap, so accept does fail
// with EMFILE and the loop must back off.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { startStormServer, panics } from './server.mjs';
import { chargeBody } from './cases.mjs';
import { chargeRequest, exchange, finals, isProblem } from './wire.mjs';

export const NOFILE = 256;
const STALLED = 300;
// The server's body timeout is 10 s; a slot frees when the first stalled bodies time
// out, and the valid client waits behind the ones still in the listen backlog.
const VALID_WITHIN_MS = 25000;

/** Both servers at once; resolves { failures: [{ what, detail }], figures: [cap, emfile] }. */
export async function fdLimitPhase(args) {
  const runs = await Promise.all([
    oneServer(args, { label: 'fd-limit', stalled: STALLED }),
    oneServer(args, { label: 'emfile', stalled: 16, spare: 8 }),
  ]);
  return { failures: runs.flatMap((r) => r.failures), figures: runs.map((r) => r.figures) };
}

/**
 * One server with NOFILE files and `stalled` stalled bodies; with `spare`, its limit
 * is lowered after start to the files it has open plus `spare`.
 */
async function oneServer(args, { label, stalled: STALLED, spare }) {
  const failures = [];
  const server = await startStormServer({ args, nofile: NOFILE });
  let nofile = NOFILE;
  if (spare) {
    nofile = readdirSync(`/proc/${server.pid}/fd`).length + spare;
    execFileSync('prlimit', ['--pid', String(server.pid), `--nofile=${nofile}:${nofile}`]);
  }
  const socks = [];
  let closedByServer = 0;
  let answered408 = 0;
  try {
    await Promise.all(Array.from({ length: STALLED }, (_, i) => new Promise((resolve) => {
      const s = net.connect({ ...server.addr, allowHalfOpen: true });
      const data = [];
      s.on('connect', () => {
        s.write(`POST /api/charges HTTP/1.1\r\nHost: storm\r\nContent-Type: application/json\r\nIdempotency-Key: ${label}-${i}\r\nX-Customer-Id: storm-fd\r\nContent-Length: 1000\r\n\r\n{"amount":`);
        resolve();
      });
      s.on('data', (d) => data.push(d));
      s.on('end', () => {
        closedByServer++;
        if (/^HTTP\/1\.1 408/.test(Buffer.concat(data).toString('latin1'))) answered408++;
      });
      s.on('error', () => resolve());
      socks.push(s);
    })));
    const cpu0 = server.cpuTicks();
    const t0 = performance.now();
    // Let the stalled connections reach the server (or its backlog) first.
    await new Promise((r) => setTimeout(r, 500));
    const x = await exchange(server.addr, [chargeRequest({ customer: 'storm-fd', key: `${label}-valid`, body: chargeBody(1) })],
      { timeoutMs: VALID_WITHIN_MS + 5000 });
    const wall = (performance.now() - t0) / 1000;
    const cpu = (server.cpuTicks() - cpu0) / 100;
    const r = finals(x)[0];
    if (r?.status !== 201) {
      failures.push({ what: `${label}: valid charge not served`, detail: `${r ? r.status : 'no answer'} after ${Math.round(x.ms)} ms (${x.closedBy}) with ${STALLED} stalled bodies and ${nofile} files` });
    } else if (x.ms > VALID_WITHIN_MS) {
      failures.push({ what: `${label}: valid charge served too late`, detail: `${Math.round(x.ms)} ms` });
    }
    // Spinning on a failing accept burns a core; waiting costs nothing.
    if (cpu > 0.5 * wall) failures.push({ what: `${label}: server spins`, detail: `${cpu.toFixed(1)} s CPU in ${wall.toFixed(1)} s` });
    if (closedByServer === 0) failures.push({ what: `${label}: stalled bodies never timed out`, detail: `0 of ${STALLED} closed by the server in ${wall.toFixed(1)} s` });
    const acceptFailures = server.log().split('\n').filter((l) => l.includes('accept failed')).length;
    if (spare && acceptFailures === 0) failures.push({ what: `${label}: accept never failed`, detail: `limit ${nofile}: the EMFILE path went untested` });
    // One warning per run of failures, not one per try.
    if (acceptFailures > 50) failures.push({ what: `${label}: the log floods with accept failures`, detail: `${acceptFailures} lines` });
    const figures = { label, nofile, stalled: STALLED, acceptFailures, validMs: Math.round(x.ms), validStatus: r?.status ?? null,
      closedByServer, answered408, cpuSeconds: cpu, wallSeconds: wall, peakRssKiB: server.peakRssKiB() };
    if (!server.alive()) failures.push({ what: `${label}: server died`, detail: server.log().slice(-2000) });
    for (const l of panics(server.log())) failures.push({ what: `${label}: panic in the log`, detail: l });
    if (r && r.status >= 400 && !isProblem(r)) failures.push({ what: `${label}: refusal without a problem body`, detail: String(r.status) });
    return { failures, figures };
  } finally {
    for (const s of socks) s.destroy();
    await server.stop();
  }
}
