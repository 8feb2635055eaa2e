// After the charge, one receipt: the ledger shows it next to the charge; a
// mailer that crashes before its ack is redelivered, on the page, and still
// sends one receipt; the naive checkout's two charges get two receipts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scenario, pay, seq, nextOutcome, armFault } from './harness.mjs';

// A short claim timeout, so the redelivery comes within seconds.
const OUTBOX = ['--outbox-claim-timeout', '2s', '--processed-retention', '1h', '--outbox-poll-interval', '100ms'];

async function receipts(server, customer) {
  const res = await fetch(`${server.url}/api/receipts`, { headers: { 'X-Customer-Id': customer } });
  assert.equal(res.status, 200, 'GET /api/receipts');
  return res.json();
}

/** The mailer's rows in the timeline, oldest first. */
async function mailRows(page) {
  const rows = await page.$$eval('#timeline li.try-mail', (els) => els.map((el) => ({ ...el.dataset, text: el.textContent })));
  return rows.reverse();
}

test('one Pay: one charge and one receipt beside it, delivered once', { timeout: 60000 }, () =>
  scenario('receipt-once', { extraArgs: OUTBOX }, async ({ openPage, ledger, server, customer }) => {
    const page = await openPage();
    const out = await pay(page);
    assert.equal(out.kind, 'paid');
    await page.waitForSelector('#timeline li.try-mail[data-mail="sent"][data-delivery="1"]', { timeout: 15000 });
    await page.waitForFunction(() => document.querySelector('#order-receipts').textContent === '1 receipt');
    const [charge] = (await ledger()).charges;
    const r = await receipts(server, customer);
    assert.equal(r.count, 1);
    assert.equal(r.receipts[0].charge_id, charge.id);
    assert.equal(r.events[0].deliveries, 1);
    assert.equal(await page.getAttribute(`#charges td.receipt-cell`, 'data-receipts'), '1', 'the ledger row shows its receipt');
    assert.deepEqual((await mailRows(page)).map((m) => m.mail), ['sent']);
  }));

test('crash the mailer before its ack: the redelivery in the timeline, still one receipt', { timeout: 90000 }, () =>
  scenario('receipt-mailer-crash', { extraArgs: OUTBOX }, async ({ openPage, ledger, server, customer }) => {
    const page = await openPage();
    await armFault(page, 'worker-crash-before-ack');
    assert.match(await page.textContent('#fault-status'), /Crash the mailer before its ack/);
    const out = await pay(page);
    assert.equal(out.kind, 'paid', 'the payment itself is untouched by the mailer');

    await page.waitForSelector('#timeline li.try-mail[data-mail="no-ack"][data-delivery="1"]', { timeout: 15000 });
    await page.waitForSelector('#timeline li.try-mail[data-mail="duplicate"][data-delivery="2"]', { timeout: 20000 });
    const rows = await mailRows(page);
    assert.deepEqual(rows.map((m) => [m.mail, m.delivery]), [['no-ack', '1'], ['duplicate', '2']]);
    assert.match(rows[1].text, /Still one receipt/);
    assert.match(await page.textContent('#mailer-live'), /^Mailer, delivery #2: a redelivery\./, 'announced to screen readers too');
    await page.waitForFunction(() => document.querySelector('#order-receipts').textContent === '1 receipt');

    const l = await ledger();
    assert.equal(l.count, 1, 'one charge');
    const r = await receipts(server, customer);
    assert.equal(r.count, 1, 'one receipt');
    assert.equal(r.receipts[0].charge_id, l.charges[0].id);
    const [ev] = r.events;
    assert.deepEqual([ev.state, ev.deliveries, ev.duplicates_skipped], ['delivered', 2, 1], 'delivered twice, the second skipped');
    await page.waitForSelector('#fault-status[data-mode="none"]', { timeout: 10000 });
  }));

test('the naive checkout under drop-after-commit: two charges, two receipts', { timeout: 60000 }, () =>
  scenario('receipt-naive', { extraArgs: OUTBOX, failedLoads: ['dropped'] }, async ({ openPage, server, customer }) => {
    const page = await openPage();
    await armFault(page, 'drop-after-commit');
    const since = await seq(page, '#naive-outcome');
    await page.click('#naive-pay');
    const out = await nextOutcome(page, since, '#naive-outcome');
    assert.equal(out.charges, '2');
    await page.waitForSelector('#naive-mail[data-receipts="2"]', { timeout: 20000 });
    assert.match(await page.textContent('#naive-mail'), /2 receipt e-mails for 2 charges/);
    await page.waitForFunction(() => document.querySelector('#naive-receipts').textContent === '2');
    const r = await receipts(server, customer);
    assert.equal(r.count, 2);
    assert.equal(new Set(r.receipts.map((x) => x.charge_id)).size, 2, 'one receipt for each of the two charges');
  }));
