// Ports for the servers the tests start on loopback.
import { createServer } from 'node:net';

/** A port nobody listens on right now on 127.0.0.1 (the kernel's pick, released at once). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}
