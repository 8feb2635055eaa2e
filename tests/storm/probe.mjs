// The probe: a GET /healthz every 100 ms while the slowloris connections are held, in a
// worker thread of its own, so the storm's own work (building and reading megabytes)
// never delays its clock. Start with startProbe(addr); stop() resolves the results.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { exchange, finals } from './wire.mjs';

const HEALTH = Buffer.from('GET /healthz HTTP/1.1\r\nHost: storm\r\nConnection: close\r\n\r\n');

if (!isMainThread) {
  let running = true;
  parentPort.on('message', () => { running = false; });
  const results = [];
  while (running) {
    const x = await exchange(workerData, [HEALTH], { timeoutMs: 5000 });
    results.push({ ms: x.ms, status: finals(x)[0]?.status ?? x.closedBy });
    await new Promise((r) => setTimeout(r, 100));
  }
  parentPort.postMessage(results);
}

/** Starts probing `addr`; `stop()` resolves [{ ms, status }] for every probe. */
export function startProbe(addr) {
  const worker = new Worker(new URL(import.meta.url), { workerData: addr });
  const done = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    stop() {
      worker.postMessage('stop');
      return done.finally(() => worker.terminate());
    },
  };
}
