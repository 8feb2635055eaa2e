// The order: cart lines with quantity steppers, the card field, the total.
// The draft (quantities, card) is kept per order in localStorage, so a reload
// or a second tab pays for the same thing. The lines are built once and then
// updated in place, so a stepper keeps keyboard focus and its live count is
// announced.
import { $, el, money } from './ui.js';

const CURRENCY = 'EUR';
const CATALOG = [
  { sku: 'yirgacheffe-250', name: 'Ethiopia Yirgacheffe', detail: 'Whole bean · 250 g', price: 1450, qty: 1, tone: '#8a5a2b' },
  { sku: 'gooseneck-kettle', name: 'Gooseneck kettle', detail: '0.9 l · brushed steel', price: 3900, qty: 1, tone: '#5b6b7a' },
  { sku: 'filters-100', name: 'Paper filters', detail: 'Pack of 100', price: 600, qty: 2, tone: '#c9b48a' },
];
const MIN_QTY = 1;
const MAX_QTY = 9;
const GOOD_CARD = '4242424242424242';

const cardDigits = (s) => s.replace(/\D/g, '');
const groupCard = (digits) => digits.replace(/(.{4})(?=.)/g, '$1 ');

/** slot(): the storage key of the current order's draft (it changes with a new order). */
export function openCart({ store, slot }) {
  let draft = load();
  const lines = new Map();

  function load() {
    let d = null;
    try { d = JSON.parse(store.get(slot()) || 'null'); } catch { d = null; }
    const qty = {};
    for (const item of CATALOG) qty[item.sku] = Number.isInteger(d?.qty?.[item.sku]) ? d.qty[item.sku] : item.qty;
    return { qty, card: typeof d?.card === 'string' ? d.card : GOOD_CARD };
  }
  const save = () => store.set(slot(), JSON.stringify(draft));
  const total = () => CATALOG.reduce((sum, item) => sum + item.price * draft.qty[item.sku], 0);

  function change(sku, delta) {
    const n = Math.min(MAX_QTY, Math.max(MIN_QTY, draft.qty[sku] + delta));
    if (n === draft.qty[sku]) return;
    draft.qty[sku] = n;
    save();
    render();
  }

  // aria-disabled rather than disabled: a stepper that reaches its limit keeps focus.
  const stepper = (item, delta, label, text) => {
    const b = el('button', { type: 'button', class: 'step', 'aria-label': `${label} ${item.name}` }, text);
    b.addEventListener('click', () => change(item.sku, delta));
    return b;
  };

  $('#cart').replaceChildren(...CATALOG.map((item) => {
    const line = {
      minus: stepper(item, -1, 'One fewer', '−'),
      plus: stepper(item, +1, 'One more', '+'),
      count: el('output', { 'aria-live': 'polite' }),
      sum: el('span', { class: 'line-total' }),
    };
    lines.set(item.sku, line);
    // Through the CSSOM: a style attribute is inline style, which the page's policy refuses.
    const thumb = el('span', { class: 'thumb', 'aria-hidden': 'true' }, item.name[0]);
    thumb.style.setProperty('--tone', item.tone);
    return el('li', { class: 'line' },
      thumb,
      el('span', { class: 'line-name' }, el('strong', {}, item.name), el('small', {}, `${item.detail} · ${money(item.price, CURRENCY)}`)),
      el('span', { class: 'qty', role: 'group', 'aria-label': `Quantity of ${item.name}` }, line.minus, line.count, line.plus),
      line.sum);
  }));

  function render() {
    for (const item of CATALOG) {
      const n = draft.qty[item.sku];
      const line = lines.get(item.sku);
      line.minus.setAttribute('aria-disabled', String(n <= MIN_QTY));
      line.plus.setAttribute('aria-disabled', String(n >= MAX_QTY));
      line.count.textContent = String(n);
      line.sum.textContent = money(item.price * n, CURRENCY);
    }
    const sum = money(total(), CURRENCY);
    for (const sel of ['#total', '#pay-amount', '#naive-amount']) $(sel).textContent = sum;
    const card = $('#card');
    if (cardDigits(card.value) !== draft.card) card.value = groupCard(draft.card);
  }

  $('#card').addEventListener('input', (ev) => {
    const input = ev.target;
    draft.card = cardDigits(input.value).slice(0, 19);
    save();
    $('#card-error').hidden = true;
    input.removeAttribute('aria-invalid');
    const formatted = groupCard(draft.card);
    if (formatted !== input.value) input.value = formatted;
  });
  for (const chip of document.querySelectorAll('[data-card]')) {
    chip.addEventListener('click', () => {
      draft.card = chip.dataset.card;
      save();
      render();
      $('#card').focus();
    });
  }

  render();
  return {
    /** The card number entered, digits only. */
    get card() { return draft.card; },
    /** The JSON body of a charge for this order. */
    payload() {
      return {
        amount: total(),
        currency: CURRENCY,
        items: CATALOG.filter((i) => draft.qty[i.sku] > 0).map((i) => ({ sku: i.sku, qty: draft.qty[i.sku], unit_amount: i.price })),
        card: draft.card,
      };
    },
    /** Read the draft again (a new order, or another tab changed it). */
    reload() {
      draft = load();
      render();
    },
  };
}
