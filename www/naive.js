// The naive checkout: a plain fetch with no idempotency key that retries on
// errors and timeouts, the way many checkouts do. It shares the ledger, so the
// duplicates it makes are there to see.
import { $, el, sleep, clock, setOutcome, setBusy } from './ui.js';

const TRIES = 3;
const RECEIPT_WAIT_MS = 20000;
// The naive checkout's charges in a ledger answer: they carry no key.
const unkeyed = (data) => data.charges.filter((c) => !c.key).length;
// The receipts the mailer sent for the naive checkout's charges.
function unkeyedReceipts(data) {
  const naive = new Set(data.charges.filter((c) => !c.key).map((c) => c.id));
  return data.receipts.filter((r) => naive.has(r.charge_id)).length;
}

export function openNaive({ api, payload, timeoutMs, ledger, onDone }) {
  const button = $('#naive-pay');
  const list = $('#naive-timeline');
  let busy = false;

  function row(n) {
    const status = el('span', { class: 'badge badge-quiet badge-live' }, 'waiting…');
    const sub = el('div', { class: 'try-sub' });
    const li = el('li', { class: 'try', 'data-try': String(n) },
      el('span', { class: 'try-n' }, `#${n}`),
      el('div', { class: 'try-main' }, el('div', { class: 'try-line' }, el('span', { class: 'badge badge-bad' }, 'no key'), status), sub),
      el('time', {}, clock(Date.now())));
    list.prepend(li);
    return {
      done(text, cls, note, code) {
        status.className = `badge badge-${cls}`;
        status.textContent = text;
        if (note) sub.textContent = note;
        if (code) li.dataset.status = String(code);
      },
    };
  }

  /** Waits for the mailer to catch up with `made` new charges, then says how many receipts went out. */
  async function showReceipts(receiptsBefore, made) {
    const note = $('#naive-mail');
    note.hidden = made === 0;
    if (made === 0) return;
    note.dataset.receipts = '';
    note.textContent = 'Waiting for the mailer…';
    const until = Date.now() + RECEIPT_WAIT_MS;
    let sent = 0;
    for (;;) {
      sent = unkeyedReceipts(await ledger.refresh()) - receiptsBefore;
      if (sent >= made || Date.now() > until) break;
      await sleep(400);
    }
    note.dataset.receipts = String(sent);
    note.textContent = made > 1
      ? `And ${sent} receipt e-mails for ${made} charges. The mailer skips a redelivered event, but every charge here is an event of its own: duplicates upstream become duplicates downstream.`
      : `${sent} receipt e-mail for the charge.`;
  }

  async function pay() {
    if (busy) return;
    busy = true;
    setBusy(button, true);
    list.replaceChildren();
    $('#naive-mail').hidden = true;
    const start = await ledger.refresh();
    const before = unkeyed(start);
    const receiptsBefore = unkeyedReceipts(start);
    const body = JSON.stringify(payload());
    let sent = 0;
    let final = null;
    for (let n = 1; n <= TRIES; n++) {
      const r = row(n);
      sent = n;
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), timeoutMs);
      try {
        const res = await api('/api/naive/charges', {
          method: 'POST', headers: { 'Content-Type': 'application/json' }, body, signal: abort.signal,
        });
        if (res.ok) { r.done(`${res.status} Created`, 'ok', '', res.status); final = res.status; break; }
        if (res.status < 500 && res.status !== 408 && res.status !== 429) {
          r.done(`${res.status}`, 'bad', 'final answer, no retry', res.status); final = res.status; break;
        }
        r.done(`${res.status}`, 'warn', n < TRIES ? 'error: try again' : 'error: giving up', res.status);
      } catch (err) {
        r.done('no answer', 'warn', (err.name === 'AbortError' ? 'timed out' : 'connection dropped') + (n < TRIES ? ': try again' : ': giving up'));
      } finally {
        clearTimeout(timer);
      }
      if (n < TRIES) await sleep(300 * n);
    }
    const after = unkeyed(await ledger.refresh());
    const made = after - before;
    const kind = made > 1 ? 'duplicate' : made === 1 ? 'paid' : 'failed';
    const title = made > 1 ? `Charged ${made} times for one order.` : made === 1 ? 'Charged once, this time.' : 'Not charged.';
    const requests = sent === 1 ? 'one request' : `${sent} requests`;
    const text = made > 1
      ? `The naive checkout sent ${requests} for one click${made > sent ? ', and the browser quietly re-sent one when the connection dropped' : ''}. Without a key the server cannot tell a retry from a new order, so every copy that arrived became a charge. This is the bug idemkey exists for.`
      : made === 1
        ? `${sent === 1 ? 'One request, one charge: nothing went wrong.' : `It sent ${requests} and only one got through.`} Arm "Drop the answer" and try again to see what retrying without a key does.`
        : `${final ? `The server answered ${final}.` : 'No request got through.'} Nothing was charged.`;
    setOutcome('#naive-outcome', kind, title, text, { charges: made });
    setBusy(button, false);
    busy = false;
    if (onDone) onDone();
    await showReceipts(receiptsBefore, made);
  }

  button.addEventListener('click', pay);
}
