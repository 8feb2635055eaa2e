// Screenshots of the demo for a human to look at (not a test):
//   node tests/e2e/screenshots.mjs [width ...]      default: 1280 375
// Pays once through a dropped answer, then runs the naive checkout through the
// same fault, and saves the page in viewport-sized slices as
// target/e2e/look-<width>-<n>.png.
import path from 'node:path';
import { SHOTS, scenario, armFault, pay, seq, nextOutcome } from './harness.mjs';

const widths = process.argv.slice(2).map(Number).filter(Boolean);
for (const width of widths.length ? widths : [1280, 375]) {
  const height = width < 600 ? 812 : 900;
  await scenario(`look-${width}`, { viewport: { width, height }, failedLoads: ['dropped'] }, async ({ openPage }) => {
    const page = await openPage();
    await armFault(page, 'drop-after-commit');
    await pay(page);
    await armFault(page, 'drop-after-commit');
    const since = await seq(page, '#naive-outcome');
    await page.click('#naive-pay');
    await nextOutcome(page, since, '#naive-outcome');
    const total = await page.evaluate(() => document.documentElement.scrollHeight);
    for (let y = 0, i = 0; y < total; y += height, i++) {
      await page.screenshot({ path: path.join(SHOTS, `look-${width}-${i}.png`), fullPage: true,
        clip: { x: 0, y, width, height: Math.min(height, total - y) } });
    }
  });
}
