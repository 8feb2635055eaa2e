// Where a checkout's time goes, phase by phase: `node bench/phases.mjs [PKG] [ROUNDS]`
// (default pkg, 300). One headless Chromium page on a reference server of its own (no
// provider latency) runs ROUNDS idemkey checkouts (open + submit + finish) and ROUNDS of the
// careful page (bench/www/handwritten.js), taking turns, with the page's Web Locks,
// IndexedDB and fetch wrapped to note when each step comes: the lock's callback, the
// transaction made, the record read, the write asked, the transaction's commit, the call of
// fetch. Prints, per phase, the median and the mean of the fastest 90 % of each (ms since
// the step before), and for idemkey the synchronous parts of `open()` and `submit()`. Not
// part of `make bench`: a tool for a change's effect, like bench/ab.mjs.
import { launchChromium } from '../tests/support/reference.mjs';
import { benchPage } from './page.mjs';

const pkg = process.argv[2] ?? 'pkg';
const rounds = Number(process.argv[3] ?? 300);

const browser = await launchChromium();
const { server, page } = await benchPage(browser, pkg);
try {
  const r = await page.evaluate(async (n) => {
    const { Checkout } = await import('/pkg/idemkey.js');
    let m = null;
    const mark = (name) => { if (m && !(name in m)) m[name] = performance.now(); };
    const locks = navigator.locks, request = locks.request;
    locks.request = function (name, ...rest) {
      const cb = rest[rest.length - 1];
      rest[rest.length - 1] = (l) => { mark('1 lock granted'); return cb(l); };
      return request.call(locks, name, ...rest);
    };
    const transaction = IDBDatabase.prototype.transaction;
    IDBDatabase.prototype.transaction = function (...a) {
      mark('2 transaction made');
      const t = transaction.apply(this, a);
      t.addEventListener('complete', () => mark('5 committed'));
      return t;
    };
    const get = IDBObjectStore.prototype.get;
    IDBObjectStore.prototype.get = function (...a) {
      const q = get.apply(this, a);
      q.addEventListener('success', () => mark('3 read'));
      return q;
    };
    const put = IDBObjectStore.prototype.put;
    IDBObjectStore.prototype.put = function (...a) { mark('4 write asked'); return put.apply(this, a); };
    const fetch0 = window.fetch;
    window.fetch = function (...a) { mark('6 fetch called'); return fetch0.apply(this, a); };
    const headers = { 'X-Customer-Id': 'bench-client' };
    const payload = { amount: 1999, currency: 'EUR', items: [{ sku: 'mug', qty: 1 }] };
    const out = { idemkey: {}, careful: {} };
    const push = (who, name, ms) => (out[who][name] ??= []).push(ms);
    for (let i = 0; i < n; i++) {
      for (const who of i % 2 ? ['idemkey', 'careful'] : ['careful', 'idemkey']) {
        await new Promise((res) => setTimeout(res, 20));
        const scope = `phases-${i}-${Math.random()}`;
        m = { '0 called': performance.now() };
        if (who === 'idemkey') {
          const c = Checkout.open({ scope, endpoint: '/api/charges', headers });
          push(who, 'open() itself', performance.now() - m['0 called']);
          const t = performance.now();
          const p = c.submit(payload);
          push(who, 'submit() until it returns', performance.now() - t);
          await p;
          c.finish();
        } else {
          await window.checkoutOnce(who, scope);
        }
        const marks = m;
        m = null;
        const names = Object.keys(marks).sort();
        for (let k = 1; k < names.length; k++) push(who, names[k], marks[names[k]] - marks[names[k - 1]]);
      }
    }
    return out;
  }, rounds);
  const sorted = (xs) => [...xs].sort((a, b) => a - b);
  const median = (xs) => sorted(xs)[xs.length >> 1];
  const fast90 = (xs) => {
    const s = sorted(xs).slice(0, Math.floor(xs.length * 0.9));
    return s.reduce((a, b) => a + b, 0) / s.length;
  };
  const f = (xs) => (xs ? `${median(xs).toFixed(2)} / ${fast90(xs).toFixed(3)}` : '-');
  console.log(`| phase (ms since the step before; median / mean of the fastest 90 %, ${rounds} each) | idemkey | careful page |`);
  console.log('| --- | ---: | ---: |');
  for (const name of [...new Set([...Object.keys(r.idemkey), ...Object.keys(r.careful)])].sort()) {
    console.log(`| ${name} | ${f(r.idemkey[name])} | ${f(r.careful[name])} |`);
  }
} finally {
  await browser.close();
  await server.stop();
}
