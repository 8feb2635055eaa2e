import { launchChromium } from '../tests/support/reference.mjs';
import { benchPage } from './page.mjs';
const pkg = process.argv[2] ?? 'pkg';
const n = Number(process.argv[3] ?? 2000);
const browser = await launchChromium();
const { server, page } = await benchPage(browser, pkg);
try {
  await page.evaluate(async () => {
    const { Checkout } = await import('/pkg/idemkey.js');
    const customer = { 'X-Customer-Id': 'bench-client' };
    const payload = { amount: 1999, currency: 'EUR', items: [{ sku: 'mug', qty: 1 }] };
    const c = Checkout.open({ scope: 'cached-prof', endpoint: '/api/charges', headers: customer });
    await c.submit(payload);
    await new Promise((r) => setTimeout(r, 100));
    const { readAlone, storeAnswer } = await import('./handwritten.js');
    const first = await c.submit(payload); await storeAnswer('cached-prof', first);
    window.aloneRun = async (k) => { for (let i = 0; i < k; i++) { const r = await readAlone('cached-prof'); if (!r) throw new Error('none'); } };
    window.cachedRun = async (k) => { for (let i = 0; i < k; i++) { const r = await c.submit(payload); if (!r.fromCache) throw new Error('not cached'); } };
  });
  await page.evaluate((k) => window.cachedRun(k), 200);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 50 });
  await cdp.send('Profiler.start');
  const t0 = Date.now();
  await page.evaluate(([k, r]) => window[r](k), [n, process.env.RUN ?? 'cachedRun']);
  const wall = Date.now() - t0;
  const { profile } = await cdp.send('Profiler.stop');
  const nodes = new Map(profile.nodes.map((x) => [x.id, x.callFrame]));
  const ms = new Map();
  profile.samples.forEach((id, i) => {
    const f = nodes.get(id);
    const name = `${f.functionName || '(anonymous)'}${f.url ? ` (${f.url.split('/').pop()}:${f.lineNumber})` : ''}`;
    ms.set(name, (ms.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000 / n);
  });
  console.log(`wall per call ${(wall / n).toFixed(3)} ms`);
  for (const [k, v] of [...ms].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(v.toFixed(4), k);
} finally { await browser.close(); await server.stop(); }
