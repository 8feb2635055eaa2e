// Where a stored answer's submit goes: like bench/costs.mjs, for `submit()` of a checkout
// whose answer is stored (`fromCache`) against the careful page's Web Lock + IndexedDB read
// of the same record. `node bench/costs-cached.mjs [PKG] [ROUNDS]`.
import { launchChromium } from '../tests/support/reference.mjs';
import { benchPage } from './page.mjs';

const pkg = process.argv[2] ?? 'pkg';
const rounds = Number(process.argv[3] ?? 2000);

const browser = await launchChromium();
const { server, page } = await benchPage(browser, pkg);
try {
  await page.evaluate(async () => {
    const { Checkout } = await import('/pkg/idemkey.js');
    const { carefulCachedRead, storeAnswer } = await import('/handwritten.js');
    const headers = { 'X-Customer-Id': 'bench-client' };
    const payload = { amount: 1999, currency: 'EUR', items: [{ sku: 'mug', qty: 1 }] };
    const scope = `costs-cached-${Math.random()}`;
    const c = Checkout.open({ scope, endpoint: '/api/charges', headers });
    const first = await c.submit(payload);
    await storeAnswer(scope, first);
    window.cachedRun = async (who, n) => {
      for (let i = 0; i < n; i++) {
        const r = who === 'idemkey' ? await c.submit(payload) : await carefulCachedRead(scope);
        if (r.key !== first.key) throw new Error('another record');
      }
    };
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 50 });
  const selfTimes = async (who) => {
    await page.evaluate(([w, n]) => window.cachedRun(w, n), [who, 100]);
    await cdp.send('Profiler.start');
    const t0 = Date.now();
    await page.evaluate(([w, n]) => window.cachedRun(w, n), [who, rounds]);
    const wall = (Date.now() - t0) / rounds;
    const { profile } = await cdp.send('Profiler.stop');
    const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    const ms = new Map([['(wall)', wall]]);
    profile.samples.forEach((id, i) => {
      const f = nodes.get(id);
      const name = `${f.functionName || '(anonymous)'}${f.url ? ` (${f.url.split('/').pop()})` : ''}`;
      ms.set(name, (ms.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000 / rounds);
    });
    return ms;
  };
  const idem = await selfTimes('idemkey');
  const careful = await selfTimes('careful');
  const names = [...new Set([...idem.keys(), ...careful.keys()])]
    .filter((n) => Math.max(idem.get(n) ?? 0, careful.get(n) ?? 0) >= 0.002)
    .sort((a, b) => (idem.get(b) ?? 0) - (careful.get(b) ?? 0) - ((idem.get(a) ?? 0) - (careful.get(a) ?? 0)));
  const f = (x) => (x ?? 0).toFixed(3);
  console.log(`| self time per call, ms (${rounds} each) | idemkey | careful page | difference |`);
  console.log('| --- | ---: | ---: | ---: |');
  for (const n of names) {
    console.log(`| ${n} | ${f(idem.get(n))} | ${f(careful.get(n))} | ${f((idem.get(n) ?? 0) - (careful.get(n) ?? 0))} |`);
  }
} finally {
  await browser.close();
  await server.stop();
}
