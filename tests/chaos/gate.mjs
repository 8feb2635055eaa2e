// Page loads versus server restarts. A kill -9 may land on any checkout request (that
// is the point), but not on a page's own boot: the demo page fetching its scripts and
// wasm from a server that is down is a page that never started, not a checkout that
// went wrong. So page loads hold the gate shared, a restart holds it alone, and a
// waiting restart goes before loads that arrive after it (it is never starved).

export function gate() {
  let readers = 0;
  let writer = false;
  const waiting = [];     // { exclusive, resolve }, in arrival order

  function wake() {
    while (waiting.length) {
      const head = waiting[0];
      if (head.exclusive) {
        if (writer || readers > 0) return;
        waiting.shift();
        writer = true;
        head.resolve();
        return;
      }
      if (writer) return;
      waiting.shift();
      readers += 1;
      head.resolve();
    }
  }

  function acquire(exclusive) {
    return new Promise((resolve) => {
      waiting.push({ exclusive, resolve });
      wake();
    });
  }

  async function hold(exclusive, fn) {
    await acquire(exclusive);
    try {
      return await fn();
    } finally {
      if (exclusive) writer = false;
      else readers -= 1;
      wake();
    }
  }

  return {
    /** Run fn while no restart runs (page loads). */
    shared: (fn) => hold(false, fn),
    /** Run fn alone (a restart). */
    exclusive: (fn) => hold(true, fn),
  };
}
