// Section 6: the benchmark runs in a Worker; the page shows progress, the results tables (encode,
// then RoPE apply), and how long the main thread went without a frame meanwhile (it should stay near 16 ms).
import { el } from '../lib/util.js';

export const SHAPES = [
  [128, 64],
  [1024, 512],
  [4096, 1024],
];

/** RoPE apply shapes [L, heads, headDim]: a LLaMA-size prompt and a small model's longer one. */
export const ROPE_SHAPES = [
  [512, 32, 128],
  [2048, 8, 64],
];

export function setupSpeed() {
  const form = document.getElementById('speed-controls');
  const button = document.getElementById('speed-run');
  const progress = document.getElementById('speed-progress');
  const status = document.getElementById('speed-status');
  const tbody = document.querySelector('#speed-table tbody');
  const ropeBody = document.querySelector('#speed-rope-table tbody');
  const note = document.getElementById('speed-note');
  let worker = null;

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (worker) return;
    tbody.replaceChildren();
    ropeBody.replaceChildren();
    progress.value = 0;
    button.disabled = true;
    status.textContent = 'starting the worker…';
    status.dataset.state = 'running';
    const jsMs = new Map();

    // main-thread responsiveness while the worker runs: the longest gap between frames
    let maxGap = 0;
    let last = performance.now();
    let running = true;
    const tick = (now) => {
      maxGap = Math.max(maxGap, now - last);
      last = now;
      if (running) requestAnimationFrame(tick);
    };
    requestAnimationFrame((now) => {
      last = now;
      requestAnimationFrame(tick);
    });

    const t0 = performance.now();
    worker = new Worker(new URL('../bench.worker.js', import.meta.url), { type: 'module' });
    const finish = (text, state) => {
      running = false;
      worker.terminate();
      worker = null;
      button.disabled = false;
      status.textContent = text;
      status.dataset.state = state;
    };
    worker.onmessage = ({ data }) => {
      if (data.type === 'start') {
        progress.max = data.total;
        status.textContent = `running 0 / ${data.total}${data.simd ? '' : ' (this browser has no wasm SIMD: baseline and JS only)'}`;
      } else if (data.type === 'result') {
        const r = data.row;
        progress.value = data.done;
        status.textContent = `running ${data.done} / ${data.total}`;
        const rope = r.kind === 'rope';
        const body = rope ? ropeBody : tbody;
        const dims = rope ? [r.length, r.heads, r.dim] : [r.length, r.dim];
        // the RoPE keys have three parts, so they never collide with an encode shape in jsMs
        const key = dims.join('x');
        if (r.impl === 'plain JS') jsMs.set(key, r.ms);
        body.append(
          el('tr', { 'data-impl': r.impl, 'data-shape': key },
            el('td', { text: dims.join(' x ') }),
            el('td', { text: r.impl }),
            el('td', { class: 'num', text: r.ms < 1 ? r.ms.toFixed(3) : r.ms.toFixed(2) }),
            el('td', { class: 'num', text: r.gbps.toFixed(2) }),
            el('td', { class: 'num', text: r.error.toExponential(1) }),
            el('td', { class: 'num', text: '' }),
          ),
        );
        if (jsMs.has(key)) {
          for (const tr of body.querySelectorAll(`tr[data-shape="${key}"]`)) {
            const ms = Number(tr.children[2].textContent);
            tr.children[5].textContent = `${(jsMs.get(key) / ms).toFixed(1)}x`;
          }
        }
      } else if (data.type === 'done') {
        const secs = ((performance.now() - t0) / 1000).toFixed(1);
        finish(`done in ${secs} s`, 'done');
        note.dataset.maxFrameGap = maxGap.toFixed(0);
        note.textContent =
          `Longest gap between frames on the page while the worker ran: ${maxGap.toFixed(0)} ms. ` +
          'Errors are measured on 64 rows spread over each table; GB/s counts the float32 table written. ' +
          'RoPE apply: errors are against the float64 rotation on 24 rows x 4 heads, divided by the norm of each pair (at least 1); ' +
          'GB/s counts every float read and written back.';
      } else if (data.type === 'error') {
        finish(`failed: ${data.message}`, 'error');
      }
    };
    worker.onerror = (e) => finish(`failed: ${e.message}`, 'error');
    worker.postMessage({ shapes: SHAPES, ropeShapes: ROPE_SHAPES });
  });
}
