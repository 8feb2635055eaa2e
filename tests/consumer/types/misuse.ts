// Deliberate misuse that `tsc --strict --noEmit` MUST reject. types.test.mjs asserts that
// tsc fails, that every line marked `// MISUSE` has an error, and that no other line has one.
import init, { Checkout } from "idemkey";

await init();

Checkout.open({ scope: "cart-1", endpoint: "/api/charges", ttlSecond: 60 }); // MISUSE: option name
Checkout.open({ scope: "cart-2", endpoint: "/api/charges", storage: "indexeddb" }); // MISUSE: storage value
Checkout.open({ scope: "cart-3", endpoint: "/api/charges", headerFormat: "quoted" }); // MISUSE: headerFormat value
Checkout.open({ endpoint: "/api/charges" }); // MISUSE: scope is required
Checkout.open({ scope: "cart-5", endpoint: "/api/charges", method: "GET" }); // MISUSE: method value
Checkout.open({ scope: "cart-6", endpoint: "/api/charges", backoff: { base: 1 } }); // MISUSE: backoff field

const c = Checkout.open({ scope: "cart-7", endpoint: "/api/charges" });
const s: string = c.state; // fine: every state is a string
const n: string = c.attempts; // MISUSE: attempts is a number
c.onEvent = () => {}; // MISUSE: no such property
Checkout.open({
  scope: "cart-8",
  endpoint: "/api/charges",
  onEvent: (e) => {
    if (e.type === "retry") void e.status; // MISUSE: retry events have no status
    if (e.type === "retry" && e.reason === "timed-out") return; // MISUSE: no such retry reason
    if (e.type === "retry" && e.reason === "status-503") return; // fine: a retryable status
  },
});
const r = await c.submit({ amount: 4200 });
void r.body.id; // MISUSE: body is unknown until the page checks it
void new Checkout(); // MISUSE: the constructor is private, use Checkout.open
void r.fromCache.length; // MISUSE: fromCache is a boolean
export { s, n };
