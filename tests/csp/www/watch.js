// The first script of every page here: it records what the test reads back through
// `window.cspReport` (the browser's CSP violation reports, which scripts loaded or failed),
// before the page's other scripts run. Module scripts run in document order, and each one's
// load or error event fires when its turn comes, so none is missed.
const report = (window.cspReport = { violations: [], scripts: [], loaded: false, result: null });

document.addEventListener("securitypolicyviolation", (e) => {
  report.violations.push({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample });
});
for (const type of ["load", "error"]) {
  document.addEventListener(type, (e) => {
    if (e.target instanceof HTMLScriptElement) report.scripts.push([type, e.target.src]);
  }, true);
}
window.addEventListener("load", () => setTimeout(() => (report.loaded = true), 100));
