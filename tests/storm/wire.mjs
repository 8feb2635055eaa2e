// Raw HTTP/1.1 over `net` sockets: the storm must send bytes no HTTP client would
// (broken heads, lying lengths, half-closed sockets), and read whatever comes back.
import net from 'node:net';

/**
 * Opens a connection, writes `parts` (Buffers, or `{ delayMs }` pauses), optionally
 * shuts the write side (`halfClose`), and reads until the server closes or
 * `timeoutMs` passes. Resolves `{ responses, closedBy, ms, bytes }`:
 * closedBy is 'server' (FIN), 'reset' (RST), 'timeout' or 'connect-error'.
 */
export function exchange(addr, parts, { halfClose = false, timeoutMs = 20000, expectResponses = 0 } = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const chunks = [];
    let done = false;
    const sock = net.connect({ host: addr.host, port: addr.port, allowHalfOpen: true });
    const finish = (closedBy, error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const bytes = Buffer.concat(chunks);
      const { responses, rest } = parseResponses(bytes);
      resolve({ responses, closedBy, error, ms: performance.now() - t0, bytes, trailing: rest.length });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    sock.on('data', (d) => {
      chunks.push(d);
      // Keep-alive answers: stop once the expected number has fully arrived.
      if (expectResponses && parseResponses(Buffer.concat(chunks)).responses.length >= expectResponses) {
        finish('client');
      }
    });
    sock.on('end', () => finish('server'));
    sock.on('error', (e) => finish(chunks.length || e.code !== 'ECONNREFUSED' ? 'reset' : 'connect-error', e.code));
    sock.on('connect', async () => {
      sock.setNoDelay(true);
      for (const p of parts) {
        if (done) return;
        if (Buffer.isBuffer(p)) {
          // A refused request may be answered before all of it is written; keep going.
          await new Promise((r) => sock.write(p, () => r()));
        } else {
          await new Promise((r) => setTimeout(r, p.delayMs));
        }
      }
      if (halfClose && !done) sock.end();
    });
  });
}

/** Splits a byte stream into complete HTTP responses; `rest` is what does not parse. */
export function parseResponses(buf) {
  const responses = [];
  let at = 0;
  while (at < buf.length) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = buf.subarray(at, end).toString('latin1');
    const [statusLine, ...lines] = head.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!m) break;
    const headers = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      if (i > 0) {
        const name = l.slice(0, i).trim().toLowerCase();
        headers[name] = headers[name] === undefined ? l.slice(i + 1).trim() : `${headers[name]}, ${l.slice(i + 1).trim()}`;
      }
    }
    let bodyStart = end + 4;
    let body;
    if ((headers['transfer-encoding'] || '').includes('chunked')) {
      const parts = [];
      let p = bodyStart;
      let complete = false;
      for (;;) {
        const nl = buf.indexOf('\r\n', p);
        if (nl < 0) break;
        const size = parseInt(buf.subarray(p, nl).toString('latin1'), 16);
        if (Number.isNaN(size) || nl + 2 + size + 2 > buf.length) break;
        if (size === 0) { p = buf.indexOf('\r\n\r\n', nl) + 4; complete = p >= 4; break; }
        parts.push(buf.subarray(nl + 2, nl + 2 + size));
        p = nl + 2 + size + 2;
      }
      if (!complete) break;
      body = Buffer.concat(parts);
      at = p;
    } else {
      const len = headers['content-length'] === undefined ? 0 : Number(headers['content-length']);
      if (bodyStart + len > buf.length) break;
      body = buf.subarray(bodyStart, bodyStart + len);
      at = bodyStart + len;
    }
    const status = Number(m[1]);
    responses.push({ status, headers, body });
    // 1xx answers precede the final one.
    if (status < 200) continue;
  }
  return { responses, rest: buf.subarray(at) };
}

/** The final (non-1xx) responses of an exchange. */
export const finals = (x) => x.responses.filter((r) => r.status >= 200);

/** True when `r` carries an RFC 9457 problem whose `status` matches. */
export function isProblem(r) {
  if (!(r.headers['content-type'] || '').startsWith('application/problem+json')) return false;
  try {
    const p = JSON.parse(r.body.toString('utf8'));
    return p.status === r.status && ['type', 'title', 'detail', 'code'].every((k) => typeof p[k] === 'string');
  } catch {
    return false;
  }
}

/** A request head: `lines` are header lines (strings or Buffers), joined with CRLF. */
export function head(requestLine, lines = []) {
  const parts = [Buffer.from(`${requestLine}\r\n`, 'latin1')];
  for (const l of lines) parts.push(Buffer.isBuffer(l) ? l : Buffer.from(l, 'latin1'), Buffer.from('\r\n'));
  parts.push(Buffer.from('\r\n'));
  return Buffer.concat(parts);
}

/** A POST /api/charges with a JSON body and the usual headers, plus `extra` header lines. */
export function chargeRequest({ customer, key, body, extra = [], close = true, contentLength }) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines = ['Host: storm', 'Content-Type: application/json', `X-Customer-Id: ${customer}`];
  if (key !== undefined) lines.push(`Idempotency-Key: ${key}`);
  if (close) lines.push('Connection: close');
  lines.push(`Content-Length: ${contentLength ?? b.length}`, ...extra);
  return Buffer.concat([head('POST /api/charges HTTP/1.1', lines), b]);
}
