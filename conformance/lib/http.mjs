// The runner's wire: one fresh connection per request (no keep-alive, so no client quietly
// re-sends a POST on a reused connection), answers read whole up to a cap, and the two
// deliberate faults the checks need: two requests written in the same tick, and a request
// whose connection is dropped as soon as its bytes are sent.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';

const MAX_BODY = 1 << 20;

/**
 * One request, resolved with { status, headers, body, ms } or { error, ms } (never rejects):
 * a refused connection or a timeout is an answer the checks report.
 */
export function send(req) {
  return new Promise((resolve) => start(req, (r) => r.end(req.body ?? undefined), resolve));
}

/**
 * Several requests, each on its own connection, all written in one tick once every connection
 * is open, so that a server sees them at once. Resolves with their answers in order.
 */
export async function sendTogether(reqs) {
  const started = reqs.map(() => null);
  let ready = 0;
  let release;
  const allOpen = new Promise((r) => { release = r; });
  const answers = reqs.map((req, i) => new Promise((resolve) => start(req, (r) => {
    started[i] = r;
    ready += 1;
    if (ready === reqs.length) release();
  }, resolve, { waitConnect: true })));
  await Promise.race([allOpen, Promise.all(answers)]);
  for (let i = 0; i < reqs.length; i++) started[i]?.end(reqs[i].body ?? undefined);
  return Promise.all(answers);
}

function start(req, write, resolve, { waitConnect = false } = {}) {
  const url = new URL(req.url);
  const lib = url.protocol === 'https:' ? https : http;
  const t0 = performance.now();
  const ms = () => Math.round(performance.now() - t0);
  let done = false;
  const finish = (answer) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    resolve({ ...answer, ms: ms() });
  };
  const headers = { ...Object.fromEntries(req.headers ?? []), connection: 'close' };
  if (req.body != null) headers['content-length'] = String(Buffer.byteLength(req.body));
  const r = lib.request(url, { method: req.method, headers, agent: false }, (res) => {
    const chunks = [];
    let size = 0;
    res.on('data', (c) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    res.on('end', () => finish({
      status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'),
    }));
    res.on('error', (e) => finish({ error: `the answer broke off: ${e.code || e.message}` }));
  });
  const timer = setTimeout(() => {
    finish({ error: `no answer within ${req.timeoutMs} ms` });
    r.destroy();
  }, req.timeoutMs);
  r.on('error', (e) => finish({ error: connectionError(e, url) }));
  if (!waitConnect) {
    write(r);
    return;
  }
  r.on('socket', (s) => {
    if (!s.connecting) write(r);
    else s.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => write(r));
  });
}

function connectionError(e, url) {
  if (e.code === 'ECONNREFUSED') return `connection refused by ${url.host}`;
  if (e.code === 'ECONNRESET') return 'connection closed without an answer';
  return `${e.code || 'error'}: ${e.message}`;
}

/**
 * Write one whole request on a raw connection and close it once the bytes are handed to the
 * system, before any answer can arrive: the answer is lost the way a timed-out or cut-off
 * try loses it. Resolves once the connection is gone ({ error } if it never opened).
 */
export function sendAndDrop(req) {
  const url = new URL(req.url);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const lines = [`${req.method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (const [name, value] of req.headers) lines.push(`${name}: ${value}`);
  lines.push(`Content-Length: ${Buffer.byteLength(req.body)}`, 'Connection: close', '', '');
  const bytes = Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), Buffer.from(req.body, 'utf8')]);
  return new Promise((resolve) => {
    const opts = { host: url.hostname.replace(/^\[|\]$/g, ''), port, servername: url.hostname };
    const socket = url.protocol === 'https:' ? tls.connect(opts) : net.connect(opts);
    socket.setTimeout(req.timeoutMs, () => socket.destroy(new Error('timeout')));
    socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      socket.write(bytes, () => socket.destroy());
    });
    socket.on('error', (e) => resolve({ error: connectionError(e, url) }));
    socket.on('close', () => resolve({}));
  });
}

/**
 * The number of charges a ledger URL shows: a dotted path to a number or an array, or by
 * default a top-level `count`, the document itself if it is an array, or its one array member.
 */
export async function ledgerCount({ url, path, headers, timeoutMs }) {
  const a = await send({ url, method: 'GET', headers, timeoutMs });
  if (a.error) throw new Error(`the ledger ${url}: ${a.error}`);
  if (a.status !== 200) throw new Error(`the ledger ${url} answered ${a.status}, not 200`);
  let doc;
  try {
    doc = JSON.parse(a.body);
  } catch {
    throw new Error(`the ledger ${url} did not answer JSON`);
  }
  const n = countIn(doc, path);
  if (n === null) {
    throw new Error(path
      ? `the ledger's ${path} is not a number or an array`
      : 'the ledger has no "count", is no array and has not exactly one array member: give --ledger-count');
  }
  return n;
}

/** Exported for its unit test. */
export function countIn(doc, path) {
  const asCount = (v) => (Array.isArray(v) ? v.length : Number.isSafeInteger(v) && v >= 0 ? v : null);
  if (path) {
    let v = doc;
    for (const part of path.split('.')) v = v !== null && typeof v === 'object' ? v[part] : undefined;
    return asCount(v);
  }
  if (Array.isArray(doc)) return doc.length;
  if (doc === null || typeof doc !== 'object') return null;
  if (asCount(doc.count) !== null) return doc.count;
  const arrays = Object.values(doc).filter(Array.isArray);
  return arrays.length === 1 ? arrays[0].length : null;
}
