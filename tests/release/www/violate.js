// The control page's Trusted Types violation, which the browser must report: a string written
// to an HTML sink (it throws, and is reported).
try {
  document.body.innerHTML = "<b>unchecked</b>";
} catch {}
window.violated = true;
