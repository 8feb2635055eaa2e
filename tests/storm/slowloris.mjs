// Slowloris: connections that are opened and then starve the server (nothing sent, a
// head or body dripped or stalled). Each is reopened when the server ends it, so the
// pressure lasts the whole storm; how the server ended each one is recorded.
import net from 'node:net';
import { parseResponses } from './wire.mjs';

const CHARGE_HEAD = 'POST /api/charges HTTP/1.1\r\nHost: storm\r\nContent-Type: application/json\r\nIdempotency-Key: slow-KEY\r\nX-Customer-Id: CUSTOMER\r\nContent-Length: 1000\r\n\r\n';

/** How each kind of holder misbehaves: what it sends first, then what it drips and how often. */
export const HOLDS = {
  idle: { first: '', drip: null },
  'stalled-head': { first: 'POST /api/charges HTTP/1.1\r\nHost: storm\r\nX-Slow: ', drip: null },
  'drip-head': { first: 'GET /healthz HTTP/1.1\r\n', drip: 'X', everyMs: 700 },
  'stalled-body': { first: `${CHARGE_HEAD}{"amount":`, drip: null },
  'drip-body': { first: `${CHARGE_HEAD}{"pad":"`, drip: 'x', everyMs: 700 },
};

/**
 * Holds `count` connections of the HOLDS kinds (round robin) until `stop()`.
 * `stop()` resolves `{ ended, open }`: ended[] = { kind, ms, status, problem }, for
 * each connection the server ended; open[] = { kind, ms } for those still open.
 */
export function holdSlowloris(addr, count, customer) {
  const kinds = Object.keys(HOLDS);
  const ended = [];
  const live = new Set();
  let stopping = false;
  let serial = 0;
  const open = (kind) => {
    const h = HOLDS[kind];
    const t0 = performance.now();
    const sock = net.connect({ host: addr.host, port: addr.port, allowHalfOpen: true });
    const conn = { kind, t0, sock, timer: null, data: [] };
    live.add(conn);
    const end = () => {
      if (!live.delete(conn)) return;
      clearInterval(conn.timer);
      sock.destroy();
      if (stopping) return;
      const { responses } = parseResponses(Buffer.concat(conn.data));
      const r = responses.find((x) => x.status >= 200);
      ended.push({ kind, ms: performance.now() - t0, status: r?.status ?? null,
        problem: (r?.headers['content-type'] || '').startsWith('application/problem+json') });
      setTimeout(() => { if (!stopping) open(kind); }, 50);
    };
    sock.on('data', (d) => conn.data.push(d));
    sock.on('end', end);
    sock.on('close', end);
    sock.on('error', end);
    sock.on('connect', () => {
      const first = h.first.replace('KEY', String(serial++)).replace('CUSTOMER', customer);
      if (first) sock.write(first);
      if (h.drip) conn.timer = setInterval(() => sock.write(h.drip), h.everyMs);
    });
  };
  for (let i = 0; i < count; i++) open(kinds[i % kinds.length]);
  return {
    stop() {
      stopping = true;
      const now = performance.now();
      const still = [...live].map((c) => ({ kind: c.kind, ms: now - c.t0 }));
      for (const c of live) { clearInterval(c.timer); c.sock.destroy(); }
      live.clear();
      return { ended, open: still };
    },
  };
}
