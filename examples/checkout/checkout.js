// The checkout page of the README's quick start. The consumer tests bundle it with Vite
// and with esbuild, load it without a bundler (no-bundler/index.html), run it in
// Chromium against the reference server and count the charges.
// #region quick-start
import init, { Checkout } from "idemkey";

await init(); // loads idemkey_bg.wasm from beside idemkey.js

const checkout = Checkout.open({
  scope: "cart-42",          // one checkout attempt per cart
  endpoint: "/api/charges",  // your payment endpoint
  onEvent: (e) => console.debug("idemkey", e.type, e),
});

const form = document.querySelector("#pay");
const result = document.querySelector("#result");
form.pay.disabled = false;   // ready: clicks before init would be lost

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    // Double-clicks, retries and refreshes all send this attempt's one key, and a click
    // after the answer gets the stored answer. So no finish() here: the attempt ends when
    // the next order begins (a new cart, a new scope).
    const r = await checkout.submit({ amount: 4200, currency: "EUR" });
    result.textContent = r.ok ? `Paid (${r.status})` : `Declined (${r.status})`;
  } catch (err) {
    if (err.code !== "outcome-unknown") throw err;
    result.textContent = "No answer yet. Press Pay again: you will not be charged twice.";
  }
});
// #endregion quick-start
