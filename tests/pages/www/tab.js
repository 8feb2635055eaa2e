// Another tab of the shop. The module is on `window.idemkey` for a test to drive; with
// `scope` and `customer` in the address the tab opens that checkout and keeps it open, as
// a second tab showing the same cart does. `window.ready` once it has.
import init, { Checkout } from "/pkg/idemkey.js";

const query = new URLSearchParams(location.search);
await init();
window.idemkey = { Checkout };
if (query.get("scope")) {
  window.checkout = Checkout.open({
    scope: query.get("scope"),
    endpoint: "/api/charges",
    headers: { "X-Customer-Id": query.get("customer") },
  });
}
window.ready = true;
