// File descriptors run out: a server limited to NOFILE open files meets more stalled
// bodies than that. It must time the stalled bodies out, not spin on a failing
// accept, and serve a valid client once the stalled ones are gone.
import net from 'node:net';
import { startStormServer, panics } from './server.mjs';
import { chargeBody } from './cases.mjs';
import { chargeRequest, exchange, finals, isProblem } from './wire.mjs';

export const NOFILE = 256;
const STALLED = 300;
// The server's body timeout is 10 s; a slot frees when the first stalled bodies time
// out, and the valid client waits behind the ones still in the listen backlog.
const VALID_WITHIN_MS = 25000;

/** Runs the phase; resolves { failures: [{ what, detail }], figures }. */
export async function fdLimitPhase(args) {
  const failures = [];
  const server = await startStormServer({ args, nofile: NOFILE });
  const socks = [];
  let closedByServer = 0;
  let answered408 = 0;
  try {
    await Promise.all(Array.from({ length: STALLED }, (_, i) => new Promise((resolve) => {
      const s = net.connect({ ...server.addr, allowHalfOpen: true });
      const data = [];
      s.on('connect', () => {
        s.write(`POST /api/charges HTTP/1.1\r\nHost: storm\r\nContent-Type: application/json\r\nIdempotency-Key: fd-${i}\r\nX-Customer-Id: storm-fd\r\nContent-Length: 1000\r\n\r\n{"amount":`);
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
    const x = await exchange(server.addr, [chargeRequest({ customer: 'storm-fd', key: 'fd-valid', body: chargeBody(1) })],
      { timeoutMs: VALID_WITHIN_MS + 5000 });
    const wall = (performance.now() - t0) / 1000;
    const cpu = (server.cpuTicks() - cpu0) / 100;
    const r = finals(x)[0];
    if (r?.status !== 201) {
      failures.push({ what: 'fd-limit: valid charge not served', detail: `${r ? r.status : 'no answer'} after ${Math.round(x.ms)} ms (${x.closedBy}) with ${STALLED} stalled bodies and ${NOFILE} files` });
    } else if (x.ms > VALID_WITHIN_MS) {
      failures.push({ what: 'fd-limit: valid charge served too late', detail: `${Math.round(x.ms)} ms` });
    }
    // Spinning on a failing accept burns a core; waiting costs nothing.
    if (cpu > 0.5 * wall) failures.push({ what: 'fd-limit: server spins', detail: `${cpu.toFixed(1)} s CPU in ${wall.toFixed(1)} s` });
    if (closedByServer === 0) failures.push({ what: 'fd-limit: stalled bodies never timed out', detail: `0 of ${STALLED} closed by the server in ${wall.toFixed(1)} s` });
    const figures = { nofile: NOFILE, stalled: STALLED, validMs: Math.round(x.ms), validStatus: r?.status ?? null,
      closedByServer, answered408, cpuSeconds: cpu, wallSeconds: wall, peakRssKiB: server.peakRssKiB() };
    if (!server.alive()) failures.push({ what: 'fd-limit: server died', detail: server.log().slice(-2000) });
    for (const l of panics(server.log())) failures.push({ what: 'fd-limit: panic in the log', detail: l });
    if (r && r.status >= 400 && !isProblem(r)) failures.push({ what: 'fd-limit: refusal without a problem body', detail: String(r.status) });
    return { failures, figures };
  } finally {
    for (const s of socks) s.destroy();
    await server.stop();
  }
}
