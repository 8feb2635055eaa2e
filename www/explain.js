// The plain-words explanation shown after each outcome of the idemkey checkout.
import { shortKey, setOutcome } from './ui.js';
import { reasonText } from './timeline.js';

function chargeOf(body) {
  let b = body;
  if (typeof b === 'string') { try { b = JSON.parse(b); } catch { return null; } }
  return b && typeof b === 'object' ? (b.charge ?? b) : null;
}

function receiptId(body) {
  return chargeOf(body)?.id ?? null;
}

/**
 * Explain one finished Pay in plain words in the outcome box under the button.
 * m: what this tab saw during the payment (clicks, tries, retries, state before);
 * r: submit()'s result, or err: its error; now: the checkout's key and state after it.
 */
export function explain(m, r, err, now) {
  const say = (kind, title, text, data = {}) => setOutcome('#outcome', kind, title, text, { clicks: m.clicks, ...data });
  const clicks = m.clicks > 1 ? `You pressed Pay ${m.clicks} times; all of them joined one request sequence with one key. ` : '';
  const retried = m.retries.length;
  const firstWhy = retried ? reasonText(m.retries[0].reason, now.timeoutMs).replace(/^status /, 'a ') : '';
  if (err) {
    const code = err.code || err.name || 'error';
    if (code === 'outcome-unknown') {
      return say('unknown', 'We could not find out whether you were charged.',
        `${clicks}idemkey tried ${m.tries === 1 ? 'once' : `${m.tries} times`} and never got a clear answer. The key ${shortKey(now.key)} is kept and the attempt stays pending, so press Pay again, now or after a reload: the same key goes out and the server charges at most once.`, { key: now.key, reason: err.reason ?? err.message });
    }
    if (code === 'payload-conflict') {
      return say('conflict', 'The order changed after its key was used.',
        `This key belongs to a ${now.state === 'succeeded' ? 'paid' : 'possibly paid'} order with different contents. idemkey will not reuse it for a different order, nor quietly swap it for a new one. Undo the change, or start a new order.`, { key: now.key });
    }
    return say('error', 'Something went wrong before the payment went out.', `${code}: ${err.message}`);
  }
  const id = receiptId(r.body);
  const charge = r.ok ? chargeOf(r.body) : null;
  const data = { key: r.key, status: r.status, replayed: r.replayed, fromCache: r.fromCache, charge: charge?.id, amount: charge?.amount };
  if (r.ok && r.fromCache && m.tries === 0) {
    if (m.stateBefore !== 'succeeded') {
      return say('paid', 'Paid, by another tab.',
        `${clicks}Another tab was paying this order at the same moment. This tab waited its turn, found that tab's receipt${id ? ` (${id})` : ''} in storage, and sent nothing. One charge.`, { ...data, waited: true });
    }
    return say('paid', 'Already paid: nothing was sent.',
      `${clicks}This order succeeded earlier, so idemkey answered from the receipt it kept${id ? ` (${id})` : ''} and sent no request. Still one charge. To buy again, start a new order.`, data);
  }
  if (r.ok && r.replayed) {
    const what = retried
      ? `The first try got ${firstWhy}, though the server had already saved the charge. idemkey retried with the same key, and`
      : m.stateBefore === 'pending'
        ? 'This key had reached the server before (the earlier try whose answer never came back), so'
        : 'The request reached the server twice: the connection dropped after the charge was saved, and the browser quietly re-sent it by itself. Both copies carried the same key, so';
    return say('paid', 'Paid once, even though an answer got lost.',
      `${clicks}${what} the server recognised it and replayed the saved receipt${id ? ` (${id})` : ''} instead of charging again. One charge in the ledger.`, data);
  }
  if (r.ok && retried) {
    return say('paid', 'Paid, on a retry.',
      `${clicks}The first try got ${firstWhy}; nothing had been saved. idemkey waited ${Math.round(m.retries[0].delayMs)} ms and retried with the same key, and this time the payment went through${id ? ` (${id})` : ''}. One charge.`, data);
  }
  if (r.ok && m.stateBefore === 'pending') {
    return say('paid', 'Paid, by resuming the earlier attempt.',
      `${clicks}This Pay reused the pending attempt's key ${shortKey(r.key)}. None of the earlier tries had gone through, so this one made the charge${id ? ` (${id})` : ''}; had one of them gone through, the server would have replayed it instead. One charge.`, data);
  }
  if (r.ok) {
    return say('paid', 'Paid. Thank you!',
      `${clicks}One key, ${m.tries === 1 ? 'one request' : `${m.tries} requests`}, one charge${id ? ` (${id})` : ''}. Press Pay again and idemkey answers from the stored receipt without sending anything.`, data);
  }
  if (r.status === 402) {
    return say('declined', 'Your card was declined.',
      `${clicks}The bank said no (402), so nothing was charged and this attempt is marked failed. Pick another card and pay again: idemkey starts a new attempt with a new key, which is safe because the server said nothing happened.`, data);
  }
  return say('refused', `The server refused the payment (${r.status}).`,
    `${clicks}That answer is final, so idemkey does not retry it; the attempt is marked failed and the next Pay uses a new key.`, data);
}
