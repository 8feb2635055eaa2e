// The server's ledger for this visitor (GET /api/charges with X-Customer-Id),
// and the receipts its mailer sent for those charges (GET /api/receipts).
import { $, el, money, shortKey, clock, toDate } from './ui.js';

const SHOWN = 8;
const shortId = (id) => { const s = String(id); return s.length > 14 ? `${s.slice(0, 12)}…` : s; };

export function openLedger({ api, orderKeys }) {
  let inflight = null;
  let again = false;
  let last = { count: 0, charges: [], receipts: [], events: [] };

  async function getJson(path) {
    const res = await api(path);
    if (!res.ok) throw new Error(`${path}: status ${res.status}`);
    return res.json();
  }

  async function load() {
    const [data, mail] = await Promise.all([getJson('/api/charges'), getJson('/api/receipts')]);
    const charges = Array.isArray(data.charges) ? data.charges : [];
    const receipts = Array.isArray(mail.receipts) ? mail.receipts : [];
    const events = Array.isArray(mail.events) ? mail.events : [];
    return { count: Number.isInteger(data.count) ? data.count : charges.length, charges, receipts, events };
  }

  /** Receipts per charge id. */
  function receiptsByCharge(data) {
    const n = new Map();
    for (const r of data.receipts) n.set(r.charge_id, (n.get(r.charge_id) || 0) + 1);
    return n;
  }

  /** The receipt cell of a charge: how many were sent, or that the mailer has not yet. */
  function receiptCell(c, sent, event) {
    const n = sent.get(c.id) || 0;
    const attrs = { class: 'receipt-cell', 'data-receipts': String(n) };
    if (n > 0) {
      return el('td', attrs, el('span', { class: `badge ${n > 1 ? 'badge-bad' : 'badge-ok'}`, title: `${n} receipt${n > 1 ? 's' : ''} e-mailed` },
        `✉ ${n}`), event && event.deliveries > 1 ? el('small', { class: 'muted' }, ` ${event.deliveries}×`) : '');
    }
    const dead = event && event.state === 'dead';
    return el('td', attrs, el('span', { class: `badge ${dead ? 'badge-bad' : 'badge-quiet badge-live'}` }, dead ? 'parked' : '…'));
  }

  function render(data) {
    const keys = new Set(orderKeys());
    const mine = data.charges.filter((c) => c.key && keys.has(c.key));
    const naive = data.charges.filter((c) => !c.key);
    const sent = receiptsByCharge(data);
    const eventOf = new Map(data.events.map((e) => [e.charge_id, e]));
    const count = (charges) => charges.reduce((sum, c) => sum + (sent.get(c.id) || 0), 0);
    const mineReceipts = count(mine);
    $('#order-receipts').textContent = `${mineReceipts} receipt${mineReceipts === 1 ? '' : 's'}`;
    $('#order-receipts').dataset.count = String(mineReceipts);
    $('#order-receipts').classList.toggle('is-dup', mineReceipts > mine.length);
    const naiveReceipts = count(naive);
    $('#naive-receipts').textContent = String(naiveReceipts);
    $('#naive-receipts-label').textContent = naiveReceipts === 1 ? 'receipt' : 'receipts';
    $('#all-receipts').textContent = String(data.receipts.length);
    $('#all-receipts-label').textContent = data.receipts.length === 1 ? 'receipt' : 'receipts';
    $('#order-charges').textContent = String(mine.length);
    $('#order-charges').dataset.count = String(mine.length);
    $('#order-charges').classList.toggle('is-dup', mine.length > 1);
    $('#order-charges-label').textContent = mine.length === 1 ? 'charge for this order' : 'charges for this order';
    $('#naive-charges').textContent = String(naive.length);
    $('#naive-charges').classList.toggle('is-dup', naive.length > 1);
    $('#all-charges').textContent = String(data.count);
    const sorted = data.charges.slice().sort((a, b) => (toDate(b.created_at)?.getTime() ?? 0) - (toDate(a.created_at)?.getTime() ?? 0)
      || String(b.id).localeCompare(String(a.id), 'en', { numeric: true }));
    const rows = sorted.slice(0, SHOWN).map((c) => {
      const ours = c.key && keys.has(c.key);
      return el('tr', { class: ours ? 'is-ours' : !c.key ? 'is-naive' : '' },
        el('td', {}, el('code', { title: String(c.id) }, shortId(c.id)), c.status && c.status !== 'succeeded' ? el('small', { class: 'muted' }, ` ${c.status}`) : ''),
        el('td', {}, c.key ? el('code', { title: c.key }, shortKey(c.key)) : el('span', { class: 'badge badge-bad' }, 'no key'),
          ours ? el('span', { class: 'sr-only' }, ' (this order)') : ''),
        el('td', { class: 'num' }, typeof c.amount === 'number' ? money(c.amount, c.currency || 'EUR') : String(c.amount ?? '')),
        receiptCell(c, sent, eventOf.get(c.id)),
        el('td', { class: 'muted' }, clock(c.created_at)));
    });
    if (sorted.length > SHOWN) {
      rows.push(el('tr', { class: 'more' }, el('td', { colspan: '5' }, `and ${sorted.length - SHOWN} older`)));
    }
    $('#charges').replaceChildren(...rows);
    const note = $('#ledger-note');
    note.hidden = data.charges.length > 0;
    note.textContent = 'Nothing charged yet.';
  }

  async function refresh() {
    if (inflight) { again = true; return inflight; }
    inflight = (async () => {
      do {
        again = false;
        try {
          last = await load();
          render(last);
        } catch (err) {
          const note = $('#ledger-note');
          note.hidden = false;
          note.textContent = `The ledger is unavailable right now (${err.message}).`;
        }
      } while (again);
      inflight = null;
      return last;
    })();
    return inflight;
  }

  $('#ledger-refresh').addEventListener('click', () => refresh());
  $('#ledger-clear').addEventListener('click', async () => {
    try { await api('/api/charges', { method: 'DELETE' }); } catch { /* shown by refresh */ }
    refresh();
  });

  return { refresh };
}
