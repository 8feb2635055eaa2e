import { scenario, armFault, pay, seq, nextOutcome } from './harness.mjs';
const width = Number(process.argv[2] || 375);
await scenario(`look-${width}`, { viewport: { width, height: width < 500 ? 812 : 900 } }, async ({ openPage }) => {
  const page = await openPage();
  await armFault(page, 'drop-after-commit');
  await pay(page);
  await armFault(page, 'drop-after-commit');
  const s = await seq(page, '#naive-outcome');
  await page.click('#naive-pay');
  await nextOutcome(page, s, '#naive-outcome');
  const h = await page.evaluate(() => document.documentElement.scrollHeight);
  const step = width < 500 ? 800 : 900;
  for (let y = 0, i = 0; y < h; y += step, i++) {
    await page.screenshot({ path: `target/e2e/look-${width}-${i}.png`, fullPage: true, clip: { x: 0, y, width, height: Math.min(step, h - y) } });
  }
});
