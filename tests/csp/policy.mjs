// The Content-Security-Policy of a payment page that uses idemkey, as docs/payment-pages.md prints it
// and the strict-CSP tests serve it: the smallest policy the module needs. The demo adds
// what its own page needs besides (its stylesheet and its favicon), as the Makefile's
// `make demo` and the end-to-end tests serve it.
export const POLICY = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; require-trusted-types-for 'script'; trusted-types 'none'";

/** The same policy without 'wasm-unsafe-eval': the browser refuses to compile any wasm. */
export const WITHOUT_WASM = POLICY.replace(" 'wasm-unsafe-eval'", "");

/** The demo page's: the module's policy, plus its stylesheet and favicon. */
export const DEMO_POLICY = `${POLICY}; style-src 'self'; img-src 'self'`;
