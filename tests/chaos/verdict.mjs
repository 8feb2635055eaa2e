// The checks of one checkout, against what the server recorded for its customer:
//   - each order has at most one charge in the ledger, and one the user paid until
//     paid has exactly one (orders are told apart by their totals: a checkout's first
//     order and a new order started during it never have the same total). One
//     exception, by contract: a key abandoned on purpose (reset() in another tab while
//     it was out) whose outcome no tab ever learned may have been charged too: the next
//     Pay uses a new key, and the demo warns that this may charge twice;
//   - every paid result a tab showed is a charge in the ledger, with its key and amount;
//   - the provider took exactly one payment per ledger charge;
//   - with receipts on the server: exactly one receipt per charge;
//   - the user got an answer (nothing left pending), and no page error or unexpected
//     console error happened in any of its tabs.
// A checkout the browser stalled before anything was sent (checkout.mjs) is not
// judged: counted as stalled, apart from the module's failures; its ledger is still
// checked (no charge may come of it).

const isOk = (o) => o.kind === 'paid' && /^2\d\d$/.test(o.status || '');

/** { duplicate, lost, unresolved, errors, stalled, problems } for one checkout record. */
export function judge(rec, { charges, provider, receipts }) {
  const problems = [];
  let duplicate = 0;
  let lost = 0;

  for (const order of rec.orders) {
    const mine = charges.filter((c) => c.amount === order.amount);
    const given = order.abandonedKey;
    const unknown = given && !rec.outcomes.some((o) => isOk(o) && o.key === given);
    const counted = mine.filter((c) => !(unknown && c.key === given));
    if (counted.length > 1) {
      duplicate += counted.length - 1;
      problems.push(`order ${order.cart} (${order.amount}) was charged ${mine.length} times: keys ${mine.map((c) => c.key).join(', ')}`);
    }
    if (order.required && mine.length === 0) {
      lost += 1;
      problems.push(`order ${order.cart} (${order.amount}) was paid until paid, yet the ledger has no charge for it`);
    }
  }
  const strays = charges.filter((c) => !rec.orders.some((o) => o.amount === c.amount));
  if (strays.length) {
    duplicate += strays.length;
    problems.push(`charges for no order of this checkout: ${strays.map((c) => `${c.id} ${c.amount} ${c.key}`).join('; ')}`);
  }

  const seen = new Set();
  for (const o of rec.outcomes.filter(isOk)) {
    const id = `${o.charge}|${o.key}|${o.amount}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const c = charges.find((x) => x.id === o.charge);
    if (!c || c.key !== o.key || c.amount !== Number(o.amount)) {
      lost += 1;
      problems.push(`${o.tab} showed paid (charge ${o.charge}, key ${o.key}, amount ${o.amount}) but the ledger has `
        + (c ? `${c.id} with key ${c.key} and amount ${c.amount}` : 'no such charge'));
    }
  }

  if (provider.payments !== charges.length) {
    const diff = provider.payments - charges.length;
    if (diff > 0) duplicate += diff;
    else lost -= diff;
    problems.push(`the provider took ${provider.payments} payments (${provider.calls} calls); the ledger has ${charges.length} charges`);
  }

  if (receipts) {
    for (const c of charges) {
      const n = receipts.filter((r) => r.charge_id === c.id).length;
      if (n > 1) duplicate += n - 1;
      if (n === 0) lost += 1;
      if (n !== 1) problems.push(`charge ${c.id} has ${n} receipts`);
    }
    const orphans = receipts.filter((r) => !charges.some((c) => c.id === r.charge_id));
    if (orphans.length) {
      duplicate += orphans.length;
      problems.push(`receipts for no charge: ${orphans.map((r) => r.id).join(', ')}`);
    }
  }

  for (const u of rec.unresolved) problems.push(`unresolved: ${u}`);
  for (const e of rec.errors) problems.push(e);
  if (rec.stalled) problems.push(`stalled, not judged (nothing was sent; the harness's failure, not the module's): ${rec.stalled}`);
  return {
    duplicate, lost, unresolved: rec.unresolved.length ? 1 : 0, errors: rec.errors.length, stalled: rec.stalled ? 1 : 0, problems,
  };
}
