// The receipt mailer behind the checkout: after a payment, follow the
// charge's outbox event and put each delivery into the timeline, so a crash
// before the ack and the redelivery that follows are there to see.
import { sleep } from './ui.js';

const POLL_MS = 400;
const FOLLOW_MS = 90000;
// A receipt written but not acknowledged for this many polls: the mailer died before its ack.
const NO_ACK_POLLS = 3;

/**
 * The deliveries the numbers of an event tell: failures come before the
 * receipt, the receipt is written once, every later delivery is a redelivery
 * the consumer skipped. `stuck` counts polls that saw the receipt unacked.
 */
export function deliveries(event, receipts, stuck) {
  const rows = [];
  if (!event) return rows;
  for (let n = 1; n <= event.failures; n++) rows.push({ delivery: n, outcome: 'failed' });
  if (receipts > 0) {
    const n = event.failures + 1;
    const acked = event.state === 'delivered' && event.deliveries === n;
    const crashed = event.duplicates_skipped > 0 || (event.state === 'pending' && stuck >= NO_ACK_POLLS);
    if (acked) rows.push({ delivery: n, outcome: 'sent' });
    else if (crashed) rows.push({ delivery: n, outcome: 'no-ack' });
    for (let k = 1; k <= event.duplicates_skipped; k++) rows.push({ delivery: n + k, outcome: 'duplicate' });
  }
  if (event.state === 'dead') rows.push({ delivery: event.deliveries, outcome: 'parked' });
  return rows;
}

export function openMailer({ ledger, timeline }) {
  const following = new Set();

  async function follow(chargeId) {
    if (!chargeId || following.has(chargeId)) return;
    following.add(chargeId);
    const until = Date.now() + FOLLOW_MS;
    let stuck = 0;
    try {
      while (Date.now() < until) {
        const data = await ledger.refresh();
        const event = data.events.find((e) => e.charge_id === chargeId);
        const receipts = data.receipts.filter((r) => r.charge_id === chargeId).length;
        if (event && event.state === 'pending' && receipts > 0) stuck += 1;
        for (const row of deliveries(event, receipts, stuck)) {
          timeline.putMail({ event: event.id, charge: chargeId, receipts, ...row });
        }
        if (event && event.state !== 'pending') return;
        await sleep(POLL_MS);
      }
    } finally {
      following.delete(chargeId);
    }
  }

  return { follow };
}
