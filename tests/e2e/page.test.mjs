// The page with the keyboard alone, at 1280 and 375 px: every control is
// reached by Tab with a visible focus ring, in the order the eye reads it, and
// a payment (fault picked with the arrow keys, Pay by Space or Enter) charges once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, seq, nextOutcome } from './harness.mjs';

/**
 * Every control a keyboard user should reach (enabled, rendered; of a radio group
 * the checked one), each marked with its name for tabWalk.
 */
function focusables(page) {
  return page.evaluate(() => [...document.querySelectorAll('a[href], button, input, select')]
    .filter((e) => !e.disabled && e.getClientRects().length && !(e.type === 'radio' && !e.checked))
    .map((e) => {
      e.dataset.e2eName = e.type === 'radio' ? `fault:${e.value}` : e.id || e.getAttribute('aria-label') || e.textContent.trim();
      return e.dataset.e2eName;
    }));
}

/**
 * Press Tab until focus comes back round; what got focus, in order, with its
 * ring (the page draws focus as an outline, never as a box-shadow a control's own
 * shadow could override) and its position.
 */
async function tabWalk(page) {
  const seen = [];
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    const d = await page.evaluate(() => {
      const a = document.activeElement;
      if (!a || a === document.body) return null;
      const ring = (e) => { const cs = getComputedStyle(e); return cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2; };
      const wrap = a.closest('.card-input');   // the card field's ring is on its wrapper
      const box = a.getBoundingClientRect();
      return { name: a.dataset.e2eName || `unlisted ${a.outerHTML.slice(0, 60)}`, ring: ring(a) || (!!wrap && ring(wrap)),
        top: box.top + window.scrollY, bottom: box.bottom + window.scrollY };
    });
    if (d && seen.length && d.name === seen[0].name) break;
    if (d) seen.push(d);
  }
  return seen;
}

async function checkTabWalk(page) {
  const expected = await focusables(page);
  const walk = await tabWalk(page);
  assert.deepEqual(walk.map((d) => d.name).sort(), expected.sort(), 'Tab reaches every control once');
  const ringless = walk.filter((d) => !d.ring).map((d) => d.name);
  assert.deepEqual(ringless, [], 'every focused control shows a focus ring');
  return walk;
}

test('at 1280 px: every control by Tab with a visible ring; steppers keep focus; a fault by arrow keys; Pay by Space', { timeout: 60000 }, () =>
  scenario('keyboard-1280', { failedLoads: ['dropped'] }, async ({ openPage, ledger }) => {
    const page = await openPage();
    await checkTabWalk(page);

    const plus = '[aria-label="One more Paper filters"]';
    await page.focus(plus);
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'One more Paper filters',
      'the stepper keeps focus after a press');
    assert.equal(await page.textContent('[aria-label="Quantity of Paper filters"] output'), '3');

    await page.focus('input[name="fault"]:checked');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.$eval('input[name="fault"]:checked', (e) => e.value), 'drop-after-commit', 'ArrowDown picks the next fault');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#fault-status[data-mode="drop-after-commit"]');

    await page.focus('#pay');
    const since = await seq(page);
    await page.keyboard.press('Space');
    const out = await nextOutcome(page, since);
    assert.equal(out.kind, 'paid', `outcome: ${out.title} ${out.text}`);
    assert.equal(out.replayed, 'true', 'the dropped answer was retried and replayed');
    assert.match(await page.textContent('#timeline-live'), /^Try 2, key \w{8}: 201 Created, replayed\./, 'the timeline announces its news');
    const l = await ledger();
    assert.equal(l.count, 1, 'one charge');
    assert.equal(l.charges[0].amount, 1450 + 3900 + 3 * 600, 'for the quantities chosen with the keyboard');
  }));

test('at 375 px the page fits, Tab follows the reading order, and Enter on Pay charges once', { timeout: 60000 }, () =>
  scenario('mobile-375', { viewport: { width: 375, height: 812 } }, async ({ openPage, ledger }) => {
    const page = await openPage();
    // WebKit's MiniBrowser window is never narrower than 447 px: the page must fit the
    // viewport it gets, 375 px wide where the browser allows it.
    const [width, viewport] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
    assert.ok(viewport <= 447, `a narrow viewport, ${viewport} px`);
    assert.ok(width <= viewport, `no horizontal overflow, scrollWidth ${width} in ${viewport} px`);

    const walk = await checkTabWalk(page);
    // Backwards: wholly above the control before it (controls side by side on one row are fine).
    const backwards = walk.filter((d, i) => i > 0 && d.bottom <= walk[i - 1].top).map((d) => d.name);
    assert.deepEqual(backwards, [], 'Tab never jumps back up the page');

    await page.focus('#pay');
    const since = await seq(page);
    await page.keyboard.press('Enter');
    const out = await nextOutcome(page, since);
    assert.equal(out.kind, 'paid');
    assert.equal((await ledger()).count, 1);
  }));
