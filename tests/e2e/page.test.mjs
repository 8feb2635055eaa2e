// The page at 375 px: no horizontal scrolling, and a payment made with the keyboard alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, seq, nextOutcome } from './harness.mjs';

test('at 375 px the page fits and pays with the keyboard alone', { timeout: 60000 }, () =>
  scenario('mobile-375', { viewport: { width: 375, height: 812 } }, async ({ openPage, ledger }) => {
    const page = await openPage();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 375, `no horizontal overflow, scrollWidth ${width}`);

    await page.focus('#card');
    let focused = '';
    for (let i = 0; i < 6 && focused !== 'pay'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
    }
    assert.equal(focused, 'pay', 'Tab reaches the Pay button from the card field');
    const since = await seq(page);
    await page.keyboard.press('Enter');
    const out = await nextOutcome(page, since);
    assert.equal(out.kind, 'paid');
    assert.equal((await ledger()).count, 1);
  }));
