// The Svelte app: Vite builds it (vite.config.js).
// #region main
import { mount } from "svelte";
import init from "idemkey";
import PayForm from "./PayForm.svelte";

await init(); // once, before mounting: Pay stays disabled until a Checkout is open
mount(PayForm, { target: document.getElementById("app"), props: { cartId: "42" } });
// #endregion main
