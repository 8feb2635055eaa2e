// Two builds of the package side by side: `node bench/ab.mjs PKG_A PKG_B [ROUNDS]` (default
// 400). Each build gets a reference server of its own (`--pkg`, no provider latency) and a
// page in one headless Chromium; the pages take turns, ten rounds at a time, and in each
// round a page times one idemkey checkout (open + submit + finish) and one of the careful
// page (bench/www/handwritten.js), in alternating order, each after the page's Web Locks
// are quiet. Prints, per build, the medians and the means of the fastest 90 % with their
// ratio and difference: the difference tells a change of a few tens of microseconds, which
// the 0.1 ms steps of the page's timer hide from a median. Two runs of one build differed
// by up to 0.04 ms in the difference. With AB_CASE=cached, a round times instead a batch of
// 20 `submit()`s answered from storage (`fromCache`) and 20 of the careful page's Web Lock +
// IndexedDB read of the same answer, per call, as `make bench`'s stored-answer ratio does.
// Not part of `make bench`: a tool for a change's effect.
import { launchChromium } from '../tests/support/reference.mjs';
import { benchPage, storedAnswerCase } from './page.mjs';

const [A, B, n] = process.argv.slice(2);
if (!A || !B) {
  console.error('usage: node bench/ab.mjs PKG_A PKG_B [ROUNDS]');
  process.exit(2);
}
const rounds = Number(n ?? 400);
const BATCH = 10;
const cached = process.env.AB_CASE === 'cached';

const browser = await launchChromium();
const servers = [];
try {
  const pages = [];
  for (const pkg of [A, B]) {
    const { server, page } = await benchPage(browser, pkg);
    servers.push(server);
    if (cached) await storedAnswerCase(page);
    await page.evaluate(() => {
      const quiet = async () => {
        await new Promise((r) => setTimeout(r, 0));
        for (let i = 0; i < 100; i++) {
          const { held, pending } = await navigator.locks.query();
          if (!held.length && !pending.length) return;
          await new Promise((r) => setTimeout(r, 1));
        }
      };
      window.abBatch = async (count, first) => {
        const out = { idemkey: [], careful: [] };
        for (let i = 0; i < count; i++) {
          for (const who of (first + i) % 2 ? ['idemkey', 'careful'] : ['careful', 'idemkey']) {
            await quiet();
            const scope = `ab-${first + i}-${Math.random()}`;
            const t0 = performance.now();
            if (window.storedRun) {
              await window.storedRun(who, 20);
              out[who].push((performance.now() - t0) / 20);
            } else {
              await window.checkoutOnce(who, scope);
              out[who].push(performance.now() - t0);
            }
          }
        }
        return out;
      };
    });
    pages.push(page);
  }
  const times = [{ idemkey: [], careful: [] }, { idemkey: [], careful: [] }];
  for (let r = 0; r < rounds; r += BATCH) {
    for (const k of (r / BATCH) % 2 ? [1, 0] : [0, 1]) {
      const o = await pages[k].evaluate(([count, first]) => window.abBatch(count, first), [BATCH, r]);
      times[k].idemkey.push(...o.idemkey);
      times[k].careful.push(...o.careful);
    }
  }
  const sorted = (xs) => [...xs].sort((a, b) => a - b);
  const median = (xs) => sorted(xs)[xs.length >> 1];
  const fast90 = (xs) => {
    const s = sorted(xs).slice(0, Math.floor(xs.length * 0.9));
    return s.reduce((a, b) => a + b, 0) / s.length;
  };
  console.log('| build | idemkey median ms | careful median ms | ratio | idemkey mean of fastest 90 % | careful | ratio | difference ms |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const k of [0, 1]) {
    const { idemkey, careful } = times[k];
    const [mi, mc, fi, fc] = [median(idemkey), median(careful), fast90(idemkey), fast90(careful)];
    console.log(`| ${[A, B][k]} | ${mi.toFixed(2)} | ${mc.toFixed(2)} | ${(mi / mc).toFixed(3)} | ${fi.toFixed(3)} | `
      + `${fc.toFixed(3)} | ${(fi / fc).toFixed(3)} | ${(fi - fc).toFixed(3)} |`);
  }
} finally {
  await browser.close();
  for (const s of servers) await s.stop();
}
