// One checkout of the chaos run, played as a user would: the order is in the cart, the
// server has this customer's faults queued, and the user makes the planned move in one
// or two tabs, then presses Pay again until a tab says the order is paid (as a user
// does after "we could not find out whether you were charged"). Everything the tabs
// showed and sent is kept for the checks; nothing here decides pass or fail.
import { GOOD_CARD, faultBody } from './plan.mjs';

const PRESS_MS = 75000;         // one Pay: the demo's whole-submit deadline is 45 s
const MAX_PRESSES = 6;          // Pays after the move before the order counts as unresolved
const POST_MS = 30000;          // a pressed Pay's first request leaves within this
const FINAL_STATE_MS = 10000;   // other tabs learn the final state within this
const CHECKOUT_MS = 240000;     // the whole checkout

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What a checkout leaves behind for the checks. */
function newRecord(plan) {
  return {
    plan, orders: [], outcomes: [], posts: [], errors: [], notes: [],
    unresolved: [], stalled: null, finalTabs: [], onPost: null, ms: 0,
  };
}

/**
 * The browser did not do what the user asked of it (no window for "Open a second
 * tab"). Before anything was sent, the module was never put to the test: the
 * checkout counts as stalled, the harness's failure, apart from the module's; after,
 * it stays unresolved.
 */
class Stall extends Error {}

/**
 * The demo keeps the customer's open order (cart id) and its draft (quantities, card)
 * in localStorage. They are put there as a shop's cart page would have left them; the
 * checkout page itself (and so idemkey's record) has not been opened yet. Written from a
 * page of the same origin, the health check, before any checkout tab loads.
 */
async function putOrderInCart(tab, url, plan, gate) {
  const cart = `ord_${plan.customer.replace(/[^A-Za-z0-9]/g, '')}`;
  await gate.shared(() => tab.page.goto(`${url}/healthz`, { timeout: POST_MS }));
  await tab.page.evaluate(([customer, id, draft]) => {
    localStorage.setItem(`idemkey-demo:cart:${customer}`, id);
    localStorage.setItem(`idemkey-demo:draft:${id}`, JSON.stringify(draft));
  }, [plan.customer, cart, { qty: plan.qty, card: GOOD_CARD }]);
  return cart;
}

/** Track one order: its cart, its amount, whether the user pays it until it is paid. */
async function addOrder(rec, tab, required) {
  const s = await tab.status();
  const order = { cart: s.cart, amount: await tab.amount(), required, paid: false };
  rec.orders.push(order);
  return order;
}

function paidSeen(rec, order) {
  return rec.outcomes.some((o) => o.kind === 'paid' && /^2\d\d$/.test(o.status || '') && Number(o.amount) === order.amount);
}

/** Press Pay and wait until that payment has finished. */
async function press(tab) {
  const { seq } = await tab.status();
  await tab.click('#pay');
  await tab.settled(seq, PRESS_MS);
}

/** The first charge request sent after `count` requests had been seen. */
async function nextPost(rec, count) {
  const until = Date.now() + POST_MS;
  while (rec.posts.length <= count) {
    if (Date.now() > until) throw new Error(`no charge request within ${POST_MS / 1000} s of Pay`);
    await sleep(5);
  }
}

/** Pay again (a user after outcome-unknown) until the order shows paid; false if it never does. */
async function payUntilPaid(rec, tab, order) {
  for (let i = 0; i < MAX_PRESSES; i += 1) {
    const s = await tab.status();
    if ((s.state === 'succeeded' && s.cart === order.cart) || paidSeen(rec, order)) return true;
    await press(tab);
  }
  const s = await tab.status();
  return (s.state === 'succeeded' && s.cart === order.cart) || paidSeen(rec, order);
}

const moves = {
  async single({ tab1 }) {
    await press(tab1);
  },

  async double({ tab1 }, p) {
    const { seq } = await tab1.status();
    if (p.demoButton) {
      await tab1.click('#move-double');
    } else {
      await tab1.page.evaluate((gap) => new Promise((resolve) => {
        const pay = document.querySelector('#pay');
        pay.click();
        setTimeout(() => { pay.click(); resolve(); }, gap);
      }), p.gapMs);
    }
    await tab1.settled(seq, PRESS_MS);
  },

  async reload({ rec, tab1, gate }, p) {
    const sent = rec.posts.length;
    if (p.demoButton) {
      // The demo reloads itself 150 ms after the first try leaves; the gate is held
      // from the click until the reloaded page is ready.
      await gate.shared(async () => {
        const loaded = tab1.page.waitForEvent('load', { timeout: POST_MS });
        await tab1.click('#move-reload');
        await loaded;
        await tab1.ready();
      });
      return;
    }
    await tab1.click('#pay');
    await nextPost(rec, sent);
    await sleep(p.afterMs);
    await tab1.reload(gate);
  },
};

/** Run the planned move, then Pay until paid; resolves with the checkout's record. */
export async function runCheckout(plan, env) {
  const rec = newRecord(plan);
  const t0 = Date.now();
  const tabs = [];
  let timer;
  const timedOut = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), CHECKOUT_MS); });
  try {
    const done = play(plan, env, rec, tabs);
    done.catch(() => {});
    const end = await Promise.race([done.then(() => 'done'), timedOut, env.stopped.then(() => 'stopped')]);
    if (end === 'timeout') rec.unresolved.push(`the checkout did not finish within ${CHECKOUT_MS / 1000} s`);
    if (end === 'stopped') rec.unresolved.push('the run was stopped');
  } catch (err) {
    const why = err.message.split('\n')[0];
    if (err instanceof Stall && rec.posts.length === 0) rec.stalled = why;
    else rec.unresolved.push(`the user could not finish: ${why}`);
  } finally {
    clearTimeout(timer);
    await Promise.all(tabs.map((t) => t.close()));
    rec.ms = Date.now() - t0;
  }
  return rec;
}

async function play(plan, env, rec, tabs) {
  const { browser, profile, gate, api, url } = env;
  const open = async (name) => {
    const t = await browser.newTab(profile, rec, name);
    tabs.push(t);
    return t;
  };
  const faults = [...plan.faults, ...(env.receipts ? plan.workerFaults : [])];
  for (const f of faults) await api.post('/api/faults', plan.customer, faultBody(f), env.faultUrl(f.instance));
  rec.onPost = () => { if (rec.posts.length === 1) env.onFirstPay(plan.index); };

  const tab1 = await open('tab1');
  const cart = await putOrderInCart(tab1, url, plan, gate);
  const pageUrl = `${url}/?customer=${plan.customer}`;
  let main = tab1;
  let order;

  if (plan.move === 'tab') {
    order = await twoTabs({ rec, tabs, tab1, open, pageUrl, gate, env }, plan.params);
  } else if (plan.move === 'tab-receipt') {
    order = await tabThenReceipt({ rec, tab1, open, pageUrl, gate }, plan.params);
  } else if (plan.move === 'reset-race' || plan.move === 'finish-race') {
    await tab1.load(pageUrl, gate);
    order = await addOrder(rec, tab1, plan.move === 'reset-race');
    const tab2 = await open('tab2');
    await tab2.load(pageUrl, gate);
    const { seq } = await tab1.status();
    const sent = rec.posts.length;
    await tab1.click('#pay');
    await nextPost(rec, sent);
    if (plan.move === 'reset-race') order.abandonedKey = rec.posts[sent].key;
    await sleep(plan.params.lagMs);
    await tab2.click(plan.move === 'reset-race' ? '#move-reset' : '#move-new');
    await tab1.settled(seq, PRESS_MS);
    if (plan.move === 'finish-race') {
      // The first order is left to its fate; the user pays the new one, in the tab that started it.
      order = await addOrder(rec, tab2, true);
      if (order.cart === cart) throw new Error('"Start a new order" kept the old order');
      main = tab2;
    }
  } else {
    await tab1.load(pageUrl, gate);
    order = await addOrder(rec, tab1, true);
    await moves[plan.move]({ rec, tab1, gate }, plan.params);
  }
  if (rec.orders[0].cart !== cart) throw new Error(`the page did not open the prepared order ${cart} (it shows ${rec.orders[0].cart})`);

  order.paid = await payUntilPaid(rec, main, order);
  if (!order.paid) rec.unresolved.push(`order ${order.cart} not paid after ${MAX_PRESSES} more Pays`);
  // Not after a reset() in another tab: that asked for a new key for the next Pay (it
  // takes effect once the paying tab lets go of the scope), so a Pay then is a new
  // purchase. Otherwise only while the tab shows the order paid.
  if (order.paid && plan.payAgainAfterPaid && plan.move !== 'reset-race' && (await main.status()).state === 'succeeded') {
    await press(main);
  }
  await finalStates(rec, tabs);
}

/**
 * Two tabs on one order. together: both load (the second staggerMs later), the first
 * pays as soon as it is ready, the second lagMs after the first (or when it is ready,
 * if later). Otherwise the demo's "Open a second tab", and the first pays as soon as
 * the second tab's document has loaded, while its module starts.
 */
async function twoTabs({ rec, tabs, tab1, open, pageUrl, gate, env }, p) {
  let tab2;
  let seq1;
  let seq2;
  let pressed;                     // when tab 1 pressed Pay; rejected if it never could
  const pressed1 = new Promise((resolve, reject) => { pressed = { resolve, reject }; });
  pressed1.catch(() => {});
  const pay1 = async () => {
    try {
      seq1 = (await tab1.status()).seq;
      await tab1.click('#pay');
      pressed.resolve(Date.now());
    } catch (err) {
      pressed.reject(err);
      throw err;
    }
  };
  const pay2 = async () => {
    const wait = (await pressed1) + p.lagMs - Date.now();
    if (wait > 0) await sleep(wait);
    seq2 = (await tab2.status()).seq;
    await tab2.click('#pay');
  };
  if (p.together) {
    tab2 = await open('tab2');
    await Promise.all([
      tab1.load(pageUrl, gate).then(pay1, (err) => { pressed.reject(err); throw err; }),
      sleep(p.staggerMs).then(() => tab2.load(pageUrl, gate)).then(pay2),
    ]);
  } else {
    await tab1.load(pageUrl, gate);
    await gate.shared(async () => {
      const opened = tab1.page.waitForEvent('popup', { timeout: POST_MS }).catch((err) => {
        throw new Stall(`the browser opened no window for "Open a second tab": ${err.message.split('\n')[0]}`);
      });
      const [popup] = await Promise.all([opened, tab1.click('#move-tab')]);
      tab2 = env.browser.adopt(popup, rec, 'tab2');
      tabs.push(tab2);
      await popup.waitForLoadState('domcontentloaded', { timeout: POST_MS });
      await pay1();
      await tab2.ready();
    });
    await pay2();
  }
  const order = await addOrder(rec, tab1, true);
  await Promise.all([tab1.settled(seq1, PRESS_MS), tab2.settled(seq2, PRESS_MS)]);
  return order;
}

/**
 * The shop's receipt route, in a tab: the first time the tab shows the order `cart` paid
 * (2xx), it starts a new order ("Start a new order": finish(), a new cart) in the same
 * turn, unless a tab of the order has done so already. Runs in the page.
 */
function receiptRoute(cart) {
  const box = document.getElementById('outcome');
  const flag = `chaos-receipt:${cart}`;
  new MutationObserver(() => {
    const shown = document.getElementById('cart-id').textContent.trim();
    if (box.dataset.kind !== 'paid' || !/^2\d\d$/.test(box.dataset.status || '') || shown !== cart) return;
    if (localStorage.getItem(flag)) return;
    localStorage.setItem(flag, '1');
    document.getElementById('move-new').click();
  }).observe(box, { attributes: true, attributeFilter: ['data-seq'] });
  return true;
}

/**
 * Pay in a tab that still shows the order `cart`, or not at all (null); what the tab showed
 * when it did (its key and state). Runs in the page.
 */
function payIfShowing(cart) {
  if (document.getElementById('cart-id').textContent.trim() !== cart) return null;
  const shown = { key: document.getElementById('key').textContent, state: document.getElementById('state').dataset.state };
  document.getElementById('pay').click();
  return shown;
}

/**
 * Two tabs on one order, each with the receipt route: tab 1 pays, and lagMs after its
 * first request left, tab 2 pays too, unless the order has moved on by then (tab 1 was
 * answered first and its receipt route started a new order, which tab 2 follows: a Pay
 * there would pay the new order); the tab answered first starts a new order at once. The
 * order is paid once, and the new order is left unpaid.
 */
async function tabThenReceipt({ rec, tab1, open, pageUrl, gate }, p) {
  await tab1.load(pageUrl, gate);
  const order = await addOrder(rec, tab1, true);
  const tab2 = await open('tab2');
  await tab2.load(pageUrl, gate);
  for (const tab of [tab1, tab2]) await tab.page.evaluate(receiptRoute, order.cart);
  const seq1 = (await tab1.status()).seq;
  const seq2 = (await tab2.status()).seq;
  const sent = rec.posts.length;
  await tab1.click('#pay');
  await nextPost(rec, sent);
  await sleep(p.lagMs);
  const pressed2 = await tab2.page.evaluate(payIfShowing, order.cart);
  rec.notes.push(pressed2 ? `tab 2 pressed Pay showing key ${pressed2.key.slice(0, 8)}, ${pressed2.state}`
    : 'tab 2 came too late: the order had moved on');
  await Promise.all([tab1.settled(seq1, PRESS_MS), pressed2 && tab2.settled(seq2, PRESS_MS)]);
  return order;
}

/** Every tab still open ends in a final state (none left pending); what each shows is kept. */
async function finalStates(rec, tabs) {
  for (const tab of tabs) {
    if (tab.page.isClosed()) continue;
    try {
      await tab.page.waitForFunction(() => document.querySelector('#state').dataset.state !== 'pending', null,
        { timeout: FINAL_STATE_MS, polling: 100 });
    } catch {
      rec.unresolved.push(`${tab.name} still shows its attempt pending`);
    }
    const s = await tab.status();
    rec.finalTabs.push({ tab: tab.name, ...s });
  }
}
