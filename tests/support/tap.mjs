// A transparent TCP relay in front of the reference server that notes every charge request
// going through it (method, path, Idempotency-Key, X-Customer-Id): what the browser really
// sent, for the browsers whose driver reports no network events (W3C WebDriver has none).
// Bytes pass unchanged both ways; when either side closes or resets, so does the other, so
// a connection the server drops is a dropped connection for the browser too. A server that
// is down (a restart) is a connection reset for the browser.
import net from 'node:net';

/**
 * Relay 127.0.0.1:<free port> to `target` ("http://127.0.0.1:port"). onRequest({ method,
 * path, key, customer, at }) is called for each request head seen. Returns { url, close() }.
 */
export async function startTap(target, onRequest) {
  const { hostname, port } = new URL(target);
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: hostname, port: Number(port) });
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', () => { upstream.resetAndDestroy(); end(); });
    upstream.on('error', () => { client.resetAndDestroy(); end(); });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('close', end);
    upstream.on('close', end);
    upstream.pipe(client, { end: false });
    // Request heads are read off the client's stream as it passes (bodies skipped by
    // Content-Length; the browsers send no chunked request bodies to this server).
    let buf = Buffer.alloc(0);
    let skip = 0;
    client.on('data', (chunk) => {
      upstream.write(chunk);
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (skip) {
          const n = Math.min(skip, buf.length);
          buf = buf.subarray(n);
          skip -= n;
          if (skip) return;
        }
        const head = buf.indexOf('\r\n\r\n');
        if (head < 0) return;
        const lines = buf.subarray(0, head).toString('latin1').split('\r\n');
        buf = buf.subarray(head + 4);
        const [method, path] = lines[0].split(' ');
        const headers = {};
        for (const l of lines.slice(1)) {
          const i = l.indexOf(':');
          if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        skip = Number(headers['content-length'] || 0);
        onRequest({ method, path, key: headers['idempotency-key'] || null, customer: headers['x-customer-id'] || null, at: Date.now() });
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
