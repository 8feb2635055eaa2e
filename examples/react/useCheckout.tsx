// A React hook around Checkout and the Pay form that uses it. The consumer tests type-check
// this file (tsc --strict, against a minimal declaration of the React API it uses: see
// tests/consumer/types/react.d.ts) and build it into the app of examples/react (main.tsx,
// under <StrictMode>), run in Chromium in its development and production builds.
// Call `await init()` once before rendering (main.tsx).
// #region hook
import { useEffect, useState, type FormEvent } from "react";
import { Checkout, type CheckoutOptions, type IdemError } from "idemkey";

export function useCheckout(options: CheckoutOptions): Checkout | null {
  const [checkout, setCheckout] = useState<Checkout | null>(null);
  useEffect(() => {
    // StrictMode (development) runs this twice: open, clean up, open. free() takes the
    // first one's onEvent off the scope's list, and unmounting does the same. With
    // nothing paid yet, the second open() shows a key of its own: the one Pay sends.
    const opened = Checkout.open(options);
    setCheckout(opened);
    return () => {
      setCheckout(null);
      opened.free();
    };
  }, [options.scope, options.endpoint]); // eslint-disable-line react-hooks/exhaustive-deps
  return checkout;
}

export function PayForm({ cartId }: { cartId: string }) {
  const checkout = useCheckout({
    scope: `cart-${cartId}`, // one attempt per cart: the next cart is the next order
    endpoint: "/api/charges",
    onEvent: (e) => console.debug("idemkey", e.type, e.key),
  });
  const [result, setResult] = useState("");
  const pay = async (event: FormEvent) => {
    event.preventDefault();
    setResult("Paying…");
    try {
      // No finish() here: a second click after the answer gets the stored answer.
      const r = await checkout!.submit({ cart: cartId, amount: 4200, currency: "EUR" });
      setResult(r.ok ? `Paid (${r.status})` : `Declined (${r.status})`);
    } catch (err) {
      // Only outcome-unknown means "maybe charged, the key is kept": pressing again is safe.
      if ((err as IdemError).code !== "outcome-unknown") throw err;
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
// #endregion hook
