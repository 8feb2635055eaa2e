// The React app: Vite builds it (vite.config.js) with the PayForm of useCheckout.tsx,
// rendered under <StrictMode>.
// #region main
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import init from "idemkey";
import { PayForm } from "./useCheckout";

await init(); // once, before the first render: Pay stays disabled until a Checkout is open

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <p>Cart 42: 42.00 EUR</p>
    <PayForm cartId="42" />
  </StrictMode>,
);
// #endregion main
