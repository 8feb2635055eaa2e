// Fault controls: the reference server (run with --faults) misbehaves on
// purpose for this customer's next request(s).
import { $ } from './ui.js';

const NAMES = { none: 'No fault armed', 'drop-after-commit': 'Drop the answer', 'error-after-commit': '502 after saving',
  'fail-before-commit': '503 before saving', 'delay-after-commit': 'Slow answer',
  'worker-crash-before-ack': 'Crash the mailer before its ack' };

export function openFaults({ api, slowMs }) {
  const pill = $('#fault-status');

  /** Shows the server's fault queue for this customer: { scheduled: [{ mode, remaining }] }. */
  function show(data) {
    const queue = (Array.isArray(data?.scheduled) ? data.scheduled : []).filter((f) => f.mode !== 'none' && f.remaining > 0);
    if (!queue.length) {
      pill.dataset.mode = 'none';
      pill.dataset.remaining = '0';
      pill.className = 'pill pill-quiet';
      pill.textContent = NAMES.none;
      return;
    }
    const first = queue[0];
    pill.dataset.mode = first.mode;
    pill.dataset.remaining = String(first.remaining);
    pill.className = 'pill pill-warn';
    pill.textContent = `Armed: ${NAMES[first.mode] || first.mode} ×${first.remaining}` + (queue.length > 1 ? ` (+${queue.length - 1} more)` : '');
  }

  const post = (body) => api('/api/faults', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  $('#fault-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const mode = new FormData(ev.target).get('fault');
    const count = Number($('#fault-count').value);
    try {
      // The server queues faults; arming replaces whatever was queued before.
      const cleared = await post({ mode: 'none' });
      if (!cleared.ok) throw new Error(`status ${cleared.status}`);
      let data = await cleared.json();
      if (mode !== 'none') {
        const res = await post(mode === 'delay-after-commit' ? { mode, count, delay_ms: slowMs } : { mode, count });
        if (!res.ok) throw new Error(`status ${res.status}`);
        data = await res.json();
      }
      show(data);
    } catch (err) {
      pill.className = 'pill pill-bad';
      pill.dataset.mode = 'error';
      pill.textContent = `Could not arm (${err.message}); is the server running with --faults?`;
    }
  });

  async function refresh() {
    try {
      const res = await api('/api/faults');
      if (res.ok) show(await res.json());
    } catch { /* the pill keeps its last value */ }
  }

  return { refresh };
}
