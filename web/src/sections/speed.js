// Section 6: the benchmark runs in a Worker; the page shows progress, the results tables (encode,
// then RoPE apply), and how long the main thread went without a frame meanwhile (it should stay near 16 ms).
// Its second part compares 1 thread with N (posenc's threaded build, loaded only then, in the
// same Worker: the pool's workers are nested workers) where the page is cross-origin isolated, and
// otherwise says why threads are unavailable. The main thread only adds table rows.
import { comparedThreads, threadsAvailable, threadsUnavailableReason } from '../lib/threads.js';
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

/** The 1-against-N tasks: [kind, L, D] of bench/threads.mjs: the big tables, and RoPE in place on
 * [L, 32, 128] queries in float32 (bound by copying them in and out) and float16 (by converting). */
export const THREAD_CASES = [
  ['encode', 100000, 512],
  ['addTo', 8192, 1024],
  ['rope', 2048, 32 * 128],
  ['rope-f16', 2048, 32 * 128],
];

/** A threads row's task, as the table shows it. */
export function threadTask(kind, length, dim) {
  if (kind === 'encode') return `encode ${length} x ${dim} into out`;
  if (kind === 'addTo') return `addTo ${length} x ${dim}`;
  return `rot.apply [${length}, 32, 128]${kind === 'rope-f16' ? ' float16' : ''}`;
}

export function setupSpeed(pe) {
  // one benchmark at a time: two at once would time each other
  const busy = { speed: false, threads: false };
  const buttons = {
    speed: document.getElementById('speed-run'),
    threads: document.getElementById('speed-threads-run'),
  };
  const canThreads = threadsAvailable(pe.simd);
  const setBusy = (part, value) => {
    busy[part] = value;
    buttons.speed.disabled = busy.speed || busy.threads;
    buttons.threads.disabled = !canThreads || busy.speed || busy.threads;
  };
  setupBenchmark(setBusy);
  setupThreadsComparison(pe, canThreads, setBusy);
}

function setupBenchmark(setBusy) {
  const form = document.getElementById('speed-controls');
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
    setBusy('speed', true);
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
      setBusy('speed', false);
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

const fmtMs = (ms) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

/** "1 thread against N": where threads can run, a run in the benchmark Worker posts one row per
 * task (both instances timed in alternation, medians); elsewhere the reason, the button disabled. */
function setupThreadsComparison(pe, canThreads, setBusy) {
  const form = document.getElementById('speed-threads-controls');
  const status = document.getElementById('speed-threads-status');
  const tbody = document.querySelector('#speed-threads-table tbody');
  const note = document.getElementById('speed-threads-note');
  const threads = comparedThreads();
  document.getElementById('speed-threads-n').textContent = `${threads} threads, median ms`;
  document.getElementById('speed-threads-ratio').textContent = `${threads} threads / 1 thread`;
  form.dataset.threads = String(threads);
  if (!canThreads) {
    setBusy('threads', false); // disables the button
    status.textContent = 'threads unavailable here';
    status.dataset.state = 'unavailable';
    note.textContent = threadsUnavailableReason(pe.simd);
    return;
  }
  note.textContent = `This page is cross-origin isolated: the comparison runs 1 thread against ${threads} ` +
    `(min(4, the ${navigator.hardwareConcurrency ?? '?'} logical cores this browser reports), at least 2).`;
  let worker = null;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (worker) return;
    tbody.replaceChildren();
    setBusy('threads', true);
    status.textContent = `loading the threaded build (${threads} threads)…`;
    status.dataset.state = 'running';
    const t0 = performance.now();
    worker = new Worker(new URL('../bench.worker.js', import.meta.url), { type: 'module' });
    const finish = (text, state) => {
      worker.terminate(); // ends the pool's workers too
      worker = null;
      setBusy('threads', false);
      status.textContent = text;
      status.dataset.state = state;
    };
    worker.onmessage = ({ data }) => {
      if (data.type === 'threads-start') {
        form.dataset.simd = String(data.simd);
        form.dataset.oneThread = String(data.oneThread);
        form.dataset.manyThreads = String(data.threads);
        status.textContent = `running 0 / ${data.total} (1 thread against ${data.threads})`;
      } else if (data.type === 'threads-result') {
        const r = data.row;
        status.textContent = `running ${data.done} / ${data.total} (1 thread against ${r.threads})`;
        const task = threadTask(r.kind, r.length, r.dim);
        tbody.append(
          el('tr', { 'data-kind': r.kind, 'data-threads': String(r.threads), 'data-same-bits': String(r.sameBits), 'data-runs': String(r.runs) },
            el('td', { text: task }),
            el('td', { class: 'num', text: fmtMs(r.ms1) }),
            el('td', { class: 'num', text: fmtMs(r.msN) }),
            el('td', { class: 'num', text: (r.msN / r.ms1).toFixed(2) }),
            el('td', { class: 'num', text: `${(r.ms1 / r.msN).toFixed(2)}x` }),
          ),
        );
      } else if (data.type === 'threads-done') {
        finish(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s`, 'done');
      } else if (data.type === 'error') {
        finish(`failed: ${data.message}`, 'error');
      }
    };
    worker.onerror = (e) => finish(`failed: ${e.message}`, 'error');
    worker.postMessage({ kind: 'threads', threads, cases: THREAD_CASES });
  });
}
