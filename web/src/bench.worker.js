// The speed benchmark, run in a Web Worker so the page stays responsive. For each shape it times
// pe.encode on the SIMD build, on the baseline build, and plain JavaScript twice: the formula as
// written (a Math.pow per element, the yardstick of `npm run bench`'s 100x target) and the same
// with the frequencies hoisted out of the row loop. Each table is checked against the float64
// formula on sampled rows. Then RoPE: rot.apply in place on [L, heads, headDim] on both builds,
// against the plain-JS rotate_half loop with cos/sin tables precomputed once per shape.
import { init, simdSupported } from 'posenc';
// The same plain-JS loops as `npm run bench` (even dims only, as the page's shapes are).
import { plainEncode, plainEncodeHoisted } from '../../bench/encode.mjs';
// and the same plain-JS RoPE loop and float64 check as its RoPE rows.
import { applyError, plainApply, sampleInput, tables } from '../../bench/rope_plain.mjs';

/** Max |table - float64 formula| over up to 64 rows spread over the table (first and last included). */
function maxError(table, length, dim, base) {
  const rows = new Set([0, length - 1]);
  for (let j = 0; j < 62; j++) rows.add(Math.floor((j * (length - 1)) / 61));
  let err = 0;
  for (const p of rows) {
    for (let c = 0; c < dim; c++) {
      const i = c >> 1;
      const a = p * Math.pow(base, (-2 * i) / dim);
      const ref = c & 1 ? Math.cos(a) : Math.sin(a);
      err = Math.max(err, Math.abs(table[p * dim + c] - ref));
    }
  }
  return err;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Median milliseconds per call of fn. Browsers coarsen performance.now() (to 0.1 ms or more
 * without cross-origin isolation), so each sample times a batch of calls lasting >= 5 ms; at least
 * `minSamples` samples and about `budgetMs` of work.
 */
function time(fn, budgetMs, minSamples = 5) {
  fn(); // warm-up
  let batch = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) fn();
    if (performance.now() - t0 >= 5 || batch >= 1 << 20) break;
    batch *= 2;
  }
  const samples = [];
  let start = performance.now();
  while (samples.length < minSamples || (performance.now() - start < budgetMs && samples.length < 40)) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) fn();
    const elapsed = performance.now() - t0;
    // A stall while sizing the batch (a busy machine, a background compile) can leave it far too
    // short for the coarse clock, which then reads most samples as 0 ms: grow it and start over.
    if (elapsed < 2.5 && batch < 1 << 20) {
      batch *= 2;
      samples.length = 0;
      start = performance.now();
      continue;
    }
    samples.push(elapsed / batch);
  }
  return median(samples);
}

self.onmessage = async (event) => {
  const { shapes, ropeShapes = [], budgetMs = 250, base = 10000 } = event.data;
  try {
    const impls = [];
    if (simdSupported()) impls.push({ name: 'wasm SIMD', pe: await init({ simd: true }) });
    impls.push({ name: 'wasm baseline', pe: await init({ simd: false }) });
    const ropeImpls = [...impls, { name: 'plain JS', pe: null }];
    impls.push({ name: 'plain JS', pe: null, js: plainEncodeHoisted });
    impls.push({ name: 'plain JS (formula as written)', pe: null, js: plainEncode });
    const total = shapes.length * impls.length + ropeShapes.length * ropeImpls.length;
    let done = 0;
    self.postMessage({ type: 'start', total, simd: simdSupported() });
    for (const [length, dim] of shapes) {
      const out = new Float32Array(length * dim);
      for (const impl of impls) {
        const run = impl.pe
          ? () => impl.pe.encode(length, dim, { base, out })
          : () => impl.js(length, dim, out, 0, base);
        const ms = time(run, budgetMs, impl.pe ? 5 : 3);
        run();
        const error = maxError(out, length, dim, base);
        done++;
        self.postMessage({
          type: 'result',
          done,
          total,
          row: { length, dim, impl: impl.name, ms, gbps: (length * dim * 4) / (ms * 1e6), error },
        });
      }
    }
    // RoPE (default base 10000, half layout). Every timed call rotates x in place once more, which
    // costs the same; the error is measured on a fresh copy of the source.
    for (const [length, heads, dim] of ropeShapes) {
      const n = length * heads * dim;
      const source = sampleInput(n);
      const x = source.slice();
      const { cos, sin } = tables(length, dim); // once per shape, outside the timing, as an app would
      for (const impl of ropeImpls) {
        let ms;
        let error;
        if (impl.pe) {
          const rot = impl.pe.rotary({ headDim: dim });
          try {
            error = applyError(rot.apply(source.slice(), { heads }), source, length, heads, dim);
            ms = time(() => rot.apply(x, { heads }), budgetMs, 5);
          } finally {
            rot.dispose();
          }
        } else {
          error = applyError(plainApply(source.slice(), length, heads, dim, cos, sin), source, length, heads, dim);
          ms = time(() => plainApply(x, length, heads, dim, cos, sin), budgetMs, 3);
        }
        done++;
        // bytes read + written: each float is read and written back once
        self.postMessage({
          type: 'result',
          done,
          total,
          row: { kind: 'rope', length, heads, dim, impl: impl.name, ms, gbps: (n * 8) / (ms * 1e6), error },
        });
      }
    }
    self.postMessage({ type: 'done' });
  } catch (err) {
    self.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
};
