// The live timeline of every try of the idemkey checkout. Kept per order in
// sessionStorage, so a reload in the middle of a payment still shows the try
// that was cut off.
import { $, el, shortKey, clock, session } from './ui.js';

const STATUS_TEXT = { 200: 'OK', 201: 'Created', 400: 'Bad Request', 402: 'Declined', 409: 'In progress', 413: 'Too Large',
  422: 'Payload differs', 429: 'Too Many', 500: 'Server Error', 502: 'Bad Gateway', 503: 'Unavailable', 504: 'Timeout' };

const CACHE_TEXT = 'Already paid: answered with the stored receipt, nothing sent';

// One delivery of the receipt mailer: its badge and what it means.
const MAIL = {
  sent: ['ok', 'receipt e-mailed', (n) => `Mailer, delivery #${n}: the receipt and the event id were saved together, then the outbox got its ack.`],
  'no-ack': ['warn', 'no ack', (n) => `Mailer, delivery #${n}: the receipt went out, then the mailer crashed before its ack. The outbox will deliver the event again.`],
  duplicate: ['replay', 'redelivered, skipped', (n) => `Mailer, delivery #${n}: a redelivery. The consumer had seen this event id, so it sent nothing and acked. Still one receipt.`],
  failed: ['warn', 'failed', (n) => `Mailer, delivery #${n}: failed before writing the receipt; the outbox retries.`],
  parked: ['bad', 'parked', () => 'Mailer: the event is older than the redelivery window and was set aside, unsent.'],
};
const statusText = (status) => `${status} ${STATUS_TEXT[status] || ''}`.trim();

/** Plain words for a retry reason of idemkey's `retry` event. */
export function reasonText(reason, timeoutMs) {
  if (reason === 'network-error') return 'no answer: the connection dropped';
  if (reason === 'timeout') return `no answer within ${timeoutMs / 1000} s`;
  return String(reason).replace(/^status-/, 'status ');
}

export function openTimeline({ timeoutMs }) {
  let slot = null;
  let entries = [];

  function save() {
    if (slot) session.set(slot, JSON.stringify(entries));
    render();
  }

  function statusBadge(status) {
    const cls = status >= 200 && status < 300 ? 'ok' : status === 402 || status === 422 || status === 400 ? 'bad' : 'warn';
    return el('span', { class: `badge badge-${cls}` }, statusText(status));
  }

  /** The line under a try: what its answer meant. */
  function subText(t) {
    if (t.retryReason) return `${reasonText(t.retryReason, timeoutMs)} → retry in ${Math.round(t.retryMs || 0)} ms, same key`;
    if (t.reason) return t.reason;
    if (t.replayed) return 'The server had this key: it replayed the first answer, no new charge';
    if (t.status === 402) return 'Declined: a final answer, nothing charged; the next Pay gets a new key';
    if (t.status >= 400) return 'A final answer: not retried';
    return '';
  }

  /** One sentence for screen readers about the newest change (the list itself is re-rendered whole). */
  function announce(t) {
    let text = CACHE_TEXT;
    if (t.kind !== 'cache') {
      const answer = t.status != null ? statusText(t.status) + (t.replayed ? ', replayed' : '')
        : t.retryReason || t.reason ? 'no answer' : 'sent, waiting for the answer';
      const sub = subText(t);
      text = `Try ${t.n}, key ${shortKey(t.key)}: ${answer}.${sub ? ` ${sub}.` : ''}`;
    }
    $('#timeline-live').textContent = text;
  }

  function mailRow(t) {
    const [cls, label, text] = MAIL[t.outcome] || MAIL.failed;
    return el('li', { class: `try try-mail${t.outcome === 'duplicate' ? ' is-redelivery' : ''}`, 'data-mail': t.outcome,
      'data-delivery': String(t.delivery), 'data-event': t.event, 'data-receipts': String(t.receipts) },
    el('span', { class: 'try-n', 'aria-hidden': 'true' }, '✉'),
    el('div', { class: 'try-main' },
      el('div', { class: 'try-line' }, el('code', { class: 'try-key', title: t.charge }, shortKey(t.charge)),
        el('span', { class: `badge badge-${cls}` }, label)),
      el('div', { class: 'try-sub' }, text(t.delivery))),
    el('time', {}, clock(t.at)));
  }

  function row(t) {
    if (t.kind === 'mail') return mailRow(t);
    if (t.kind === 'cache') {
      return el('li', { class: 'try try-cache', 'data-cache': 'true' },
        el('span', { class: 'try-n', 'aria-hidden': 'true' }, '↺'),
        el('div', { class: 'try-main' },
          el('div', { class: 'try-line' }, el('code', { class: 'try-key' }, shortKey(t.key)), el('span', { class: 'badge badge-quiet' }, 'from storage')),
          el('div', { class: 'try-sub' }, CACHE_TEXT)),
        el('time', {}, clock(t.at)));
    }
    const attrs = { class: 'try', 'data-try': String(t.n), 'data-key': t.key };
    if (t.status != null) attrs['data-status'] = String(t.status);
    if (t.replayed) attrs['data-replayed'] = 'true';
    if (t.instance) attrs['data-instance'] = t.instance;
    if (t.retryReason) attrs['data-retry-reason'] = t.retryReason;
    const line = el('div', { class: 'try-line' }, el('code', { class: 'try-key', title: t.key }, shortKey(t.key)));
    if (t.status != null) line.append(statusBadge(t.status));
    else if (t.retryReason || t.reason) line.append(el('span', { class: 'badge badge-warn' }, 'no answer'));
    else line.append(el('span', { class: 'badge badge-quiet badge-live' }, 'waiting…'));
    if (t.replayed) line.append(el('span', { class: 'badge badge-replay' }, 'replayed'));
    if (t.instance) line.append(el('span', { class: 'badge badge-quiet try-instance', title: 'the server instance that answered' }, `by ${t.instance}`));
    const sub = subText(t);
    return el('li', attrs,
      el('span', { class: 'try-n' }, `#${t.n}`),
      el('div', { class: 'try-main' }, line, sub ? el('div', { class: 'try-sub' }, sub) : ''),
      el('time', {}, clock(t.at)));
  }

  function render() {
    $('#timeline').replaceChildren(...entries.slice().reverse().map(row));
    $('#timeline-empty').hidden = entries.length > 0;
  }

  $('#timeline-clear').addEventListener('click', () => { entries = []; save(); });

  return {
    /** Switch to the timeline of another order (at start and on a new order). */
    load(newSlot) {
      slot = newSlot;
      try { entries = JSON.parse(session.get(slot) || '[]'); } catch { entries = []; }
      for (const t of entries) {
        if (t.kind === 'try' && t.status == null && !t.retryReason && !t.reason) t.reason = 'cut off: the page was left before the answer';
      }
      save();
    },
    push(entry) {
      entries = [...entries, entry].slice(-40);
      save();
      announce(entry);
    },
    /** Add or update one delivery of the receipt mailer ({ event, delivery, outcome, charge, receipts }). */
    putMail(mail) {
      const found = entries.find((t) => t.kind === 'mail' && t.event === mail.event && t.delivery === mail.delivery);
      if (found && found.outcome === mail.outcome && found.receipts === mail.receipts) return;
      if (found) Object.assign(found, mail);
      else entries = [...entries, { kind: 'mail', at: Date.now(), ...mail }].slice(-40);
      save();
      // Its own live region: the mailer's news never talks over a try's.
      $('#mailer-live').textContent = (MAIL[mail.outcome] || MAIL.failed)[2](mail.delivery);
    },
    /** Update the newest try (a response or retry event belongs to it). */
    patchLastTry(patch) {
      const last = entries.findLast((t) => t.kind === 'try');
      if (!last) return;
      Object.assign(last, patch);
      save();
      announce(last);
    },
  };
}
