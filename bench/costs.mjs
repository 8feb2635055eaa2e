// Where a checkout's time goes, by the calls it makes: `node bench/costs.mjs [PKG] [ROUNDS]`
// (default pkg, 300). One headless Chromium page on a reference server of its own (no
// provider latency) runs ROUNDS idemkey checkouts (open + submit + finish) and ROUNDS of the
// careful page (bench/www/handwritten.js), each under V8's sampling profiler (one sample
// every 50 µs), and prints the self time per checkout of every function or browser call
// that took 5 µs or more in either, with the difference: what idemkey's Web Storage
// copies, BroadcastChannel posts and strings crossing into and out of the wasm cost, which
// the 0.1 ms steps of a page's timer hide. With COSTS_CASE=cached, per call of a `submit()`
// answered from storage against the careful page's Web Lock + IndexedDB read of the same
// answer, as `make bench`'s stored-answer ratio (ROUNDS default 2000). Not part of `make
// bench`: a tool for a change's effect, like bench/ab.mjs.
import { launchChromium } from '../tests/support/reference.mjs';
import { benchPage, storedAnswerCase } from './page.mjs';

const cached = process.env.COSTS_CASE === 'cached';
const pkg = process.argv[2] ?? 'pkg';
const rounds = Number(process.argv[3] ?? (cached ? 2000 : 300));

const browser = await launchChromium();
const { server, page } = await benchPage(browser, pkg);
try {
  await page.evaluate(() => {
    window.costsRun = async (who, n) => {
      for (let i = 0; i < n; i++) {
        // What the last checkout left running (its answer's write, finish()'s turn) ends first.
        await new Promise((r) => setTimeout(r, 10));
        await window.checkoutOnce(who, `costs-${who}-${i}-${Math.random()}`);
      }
    };
  });
  if (cached) await storedAnswerCase(page);
  const run = cached ? 'storedRun' : 'costsRun';
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 50 });
  const selfTimes = async (who) => {
    await page.evaluate(([f, w, n]) => window[f](w, n), [run, who, 20]); // warm up
    await cdp.send('Profiler.start');
    await page.evaluate(([f, w, n]) => window[f](w, n), [run, who, rounds]);
    const { profile } = await cdp.send('Profiler.stop');
    const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    const ms = new Map();
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
    .filter((n) => n !== '(idle)' && Math.max(idem.get(n) ?? 0, careful.get(n) ?? 0) >= 0.005)
    .sort((a, b) => (idem.get(b) ?? 0) - (careful.get(b) ?? 0) - ((idem.get(a) ?? 0) - (careful.get(a) ?? 0)));
  const f = (x) => (x ?? 0).toFixed(3);
  console.log(`| self time per ${cached ? 'call' : 'checkout'}, ms (${rounds} each) | idemkey | careful page | difference |`);
  console.log('| --- | ---: | ---: | ---: |');
  for (const n of names) {
    console.log(`| ${n} | ${f(idem.get(n))} | ${f(careful.get(n))} | ${f((idem.get(n) ?? 0) - (careful.get(n) ?? 0))} |`);
  }
} finally {
  await browser.close();
  await server.stop();
}
