// A shop's checkout page, as a user writes it: init(), open the cart's scope, submit the
// basket. With `phase=1` it then ends the attempt on the receipt route (`end`: finish or
// reset) and leaves the page in the same task, awaiting nothing (`leave`: a click on a
// link, location.assign, or a reload), to this page with `phase=2`, which pays the same
// basket again under the same scope; or (`leave=stay`) pays it again in the same page.
// `window.report` holds what a page saw; the page of phase 2 also carries phase 1's,
// passed on in its address. `window.step` says how far the page has come.
import init, { Checkout } from "/pkg/idemkey.js";

const query = new URLSearchParams(location.search);
const BASKET = { amount: 4200, currency: "EUR", items: [{ sku: "tea", qty: 2 }] };

async function pay() {
  window.step = "init";
  await init();
  window.step = "open";
  const checkout = Checkout.open({
    scope: query.get("scope"),
    endpoint: "/api/charges",
    headers: { "X-Customer-Id": query.get("customer") },
  });
  const shown = { key: checkout.key, state: checkout.state };
  window.step = "submit";
  window.shown = shown;
  try {
    const r = await checkout.submit(BASKET);
    return { checkout, shown, result: { key: r.key, status: r.status, ok: r.ok, fromCache: r.fromCache } };
  } catch (e) {
    return { checkout, shown, result: { error: e.code || String(e), message: e.message } };
  }
}

function moveOn(checkout, seen) {
  const next = new URL(location.href);
  next.searchParams.set("phase", "2");
  next.searchParams.set("first", JSON.stringify(seen));
  if (query.get("leave") === "reload") history.replaceState(null, "", next);
  // What else happens on the receipt route just before the end (a page clock set back).
  window.beforeEnd?.();
  if (query.get("end") === "reset") checkout.reset();
  else checkout.finish();
  // A shop's script that removes the scope's flag by hand (`dropFlag`), the end's mark left.
  if (query.get("dropFlag")) localStorage.removeItem(`idemkey:ends:${query.get("scope")}`);
  switch (query.get("leave")) {
    case "link": {
      const a = document.getElementById("next");
      a.href = next.href;
      a.click();
      break;
    }
    case "assign":
      location.assign(next);
      break;
    case "reload":
      location.reload();
      break;
    case "stay": {
      // No page load: the customer pays the next order (the same basket) in this page.
      const again = { key: checkout.key, state: checkout.state };
      window.shown = again;
      checkout.submit(BASKET).then(
        (r) => ({ key: r.key, status: r.status, ok: r.ok, fromCache: r.fromCache }),
        (e) => ({ error: e.code || String(e), message: e.message }),
      ).then((result) => {
        window.report = { phase: 2, first: seen, shown: again, result };
      });
      break;
    }
    default:
      throw new Error(`unknown leave=${query.get("leave")}`);
  }
}

const { checkout, shown, result } = await pay().catch((e) => ({ shown: null, result: { error: String(e) } }));
if (query.get("phase") === "1" && result.status === 201) {
  moveOn(checkout, { shown, result });
} else {
  const first = query.get("first");
  window.report = { phase: Number(query.get("phase")), first: first && JSON.parse(first), shown, result };
}
