// A React hook around Checkout, type-checked by the consumer tests (tsc --strict,
// against a minimal declaration of the React API it uses: see tests/consumer/types/react.d.ts).
// Call `await init()` once before rendering (e.g. in main.tsx).
// #region hook
import { useEffect, useState } from "react";
import { Checkout, type CheckoutOptions, type IdemError } from "idemkey";

export function useCheckout(options: CheckoutOptions): Checkout | null {
  const [checkout, setCheckout] = useState<Checkout | null>(null);
  useEffect(() => {
    // A second open() of a scope in the page is the same attempt (same key, same state):
    // StrictMode's second run is harmless.
    setCheckout(Checkout.open(options));
  }, [options.scope, options.endpoint]); // eslint-disable-line react-hooks/exhaustive-deps
  return checkout;
}

export function PayButton({ cartId }: { cartId: string }) {
  const checkout = useCheckout({ scope: `cart-${cartId}`, endpoint: "/api/charges" });
  const [message, setMessage] = useState("");
  const pay = async () => {
    try {
      const r = await checkout!.submit({ cart: cartId, amount: 4200, currency: "EUR" });
      // No finish() here: a second click after the answer gets the stored answer. The
      // attempt ends when the next order begins (another cartId, another scope).
      setMessage(r.ok ? "Paid" : `Declined (${r.status})`);
    } catch (err) {
      // Only outcome-unknown means "maybe charged, the key is kept": pressing again is safe.
      if ((err as IdemError).code !== "outcome-unknown") throw err;
      setMessage("No answer yet: press again, you will not be charged twice");
    }
  };
  return <button disabled={!checkout} onClick={pay}>{message || "Pay"}</button>;
}
// #endregion hook
