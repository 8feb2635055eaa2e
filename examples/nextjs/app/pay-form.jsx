// #region client
"use client";
import { useEffect, useState } from "react";
import init, { Checkout } from "idemkey";

export default function PayForm({ cartId }) {
  const [checkout, setCheckout] = useState(null);
  const [result, setResult] = useState("");

  useEffect(() => {
    // Effects run in the browser only: the server renders the form with Pay disabled and
    // never loads the wasm. init() called again (StrictMode, another component) loads it once.
    let opened = null;
    let mounted = true;
    init().then(() => {
      if (!mounted) return; // unmounted meanwhile (StrictMode's first mount)
      opened = Checkout.open({
        scope: `cart-${cartId}`, // one attempt per cart: the next cart is the next order
        endpoint: "/api/charges",
        onEvent: (e) => console.debug("idemkey", e.type, e.key),
      });
      setCheckout(opened);
    });
    return () => {
      mounted = false;
      setCheckout(null);
      opened?.free(); // takes this Checkout's onEvent off the scope's list
    };
  }, [cartId]);

  const pay = async (event) => {
    event.preventDefault();
    setResult("Paying…");
    try {
      // No finish() here: a second click after the answer gets the stored answer.
      const r = await checkout.submit({ cart: cartId, amount: 4200, currency: "EUR" });
      setResult(r.ok ? `Paid (${r.status})` : `Declined (${r.status})`);
    } catch (err) {
      if (err.code !== "outcome-unknown") throw err;
      setResult("No answer yet. Press Pay again: you will not be charged twice.");
    }
  };

  return (
    <form id="pay" onSubmit={pay}>
      <button name="pay" disabled={!checkout}>Pay 42.00 EUR</button>
      <output id="result">{result}</output>
    </form>
  );
}
// #endregion client
