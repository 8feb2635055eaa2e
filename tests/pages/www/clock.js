// The page's wall clock as a customer's machine may have it, set before any module runs:
// `clock=back-N` in the address steps Date.now back by N ms once the payment is answered
// (an NTP correction, a laptop waking, a customer fixing the time), on the receipt route
// just before the attempt ends, and stays N ms behind on the pages that follow (they carry
// the address on); `clock=round-N` rounds it down to N ms on every page (Firefox's and Tor's
// fingerprinting resistance round it to 100 ms).
(() => {
  const query = new URLSearchParams(location.search);
  const m = /^(back|round)-(\d+)$/.exec(query.get("clock") || "");
  if (!m) throw new Error(`clock.js: clock=back-N or round-N, not ${query.get("clock")}`);
  const real = Date.now.bind(Date);
  const n = Number(m[2]);
  if (m[1] === "round") {
    Date.now = () => Math.floor(real() / n) * n;
    return;
  }
  let behind = query.get("phase") === "1" ? 0 : n;
  Date.now = () => real() - behind;
  window.beforeEnd = () => {
    behind = n;
  };
})();
