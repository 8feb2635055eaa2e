// Small DOM and formatting helpers shared by the demo's modules.

export const $ = (sel) => document.querySelector(sel);

/** el('li', { class: 'x', disabled: true }, child, 'text') */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === '' || child == null) continue;
    node.append(child);
  }
  return node;
}

const formats = new Map();
export function money(minor, currency) {
  if (!formats.has(currency)) formats.set(currency, new Intl.NumberFormat('en-IE', { style: 'currency', currency }));
  return formats.get(currency).format(minor / 100);
}

export const shortKey = (key) => (key ? String(key).slice(0, 8) : '—');
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function toDate(value) {
  if (typeof value === 'number') return new Date(value > 1e12 ? value : value * 1000);
  if (typeof value === 'string' && /^\d+$/.test(value)) return toDate(Number(value));
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function clock(value) {
  const d = toDate(value);
  return d ? d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' }) : '';
}

export function relTime(ms) {
  const diff = ms - Date.now();
  if (!Number.isFinite(diff)) return '—';
  if (diff <= 0) return 'expired';
  const h = diff / 3600000;
  if (h >= 1) return `in ${Math.round(h)} h`;
  const m = diff / 60000;
  return m >= 1 ? `in ${Math.round(m)} min` : `in ${Math.round(diff / 1000)} s`;
}

// The demo's own bookkeeping (customer, order, draft). Storage may throw
// (private mode, blocked cookies): fall back to memory, like idemkey does.
function safeStorage(kind) {
  const memory = new Map();
  const backend = () => { try { return window[kind]; } catch { return null; } };
  const api = {
    get(k) { try { return backend().getItem(k); } catch { return memory.has(k) ? memory.get(k) : null; } },
    set(k, v) { try { backend().setItem(k, v); } catch { memory.set(k, v); } },
    remove(k) { try { backend().removeItem(k); } catch { /* ignore */ } memory.delete(k); },
    getOrCreate(k, make) {
      const found = api.get(k);
      if (found) return found;
      const made = make();
      api.set(k, made);
      return made;
    },
  };
  return api;
}
export const store = safeStorage('localStorage');
export const session = safeStorage('sessionStorage');

/** A pay button's spinner and aria-busy while its payment runs. */
export function setBusy(button, busy) {
  button.classList.toggle('is-busy', busy);
  button.setAttribute('aria-busy', String(busy));
}

/**
 * Show a plain-words outcome; data-seq lets tests wait for the next one, and the data-*
 * (the charge's id and amount, an error's reason) let them check it against the ledger.
 */
export function setOutcome(sel, kind, title, text, data = {}) {
  const box = document.querySelector(sel);
  box.hidden = false;
  box.dataset.kind = kind;
  box.dataset.seq = String(Number(box.dataset.seq || 0) + 1);
  for (const name of ['key', 'status', 'replayed', 'fromCache', 'waited', 'charges', 'clicks', 'charge', 'amount', 'reason']) {
    if (data[name] === undefined) delete box.dataset[name];
    else box.dataset[name] = String(data[name]);
  }
  box.querySelector('.outcome-title').textContent = title;
  box.querySelector('.outcome-text').textContent = text;
}
