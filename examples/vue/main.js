// The Vue app: Vite builds it (vite.config.js).
// #region main
import { createApp } from "vue";
import init from "idemkey";
import PayForm from "./PayForm.vue";

await init(); // once, before mounting: Pay stays disabled until a Checkout is open
createApp(PayForm, { cartId: "42" }).mount("#app");
// #endregion main
