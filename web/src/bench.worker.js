// The speed benchmark, run in a Web Worker so the page stays responsive. For each shape it times
// pe.encode on the SIMD build, on the baseline build, and plain JavaScript twice: the formula as
// written (a Math.pow per element, the yardstick of `npm run bench`'s 100x target) and the same
// with the frequencies hoisted out of the row loop. Each table is checked against the float64
// formula on sampled rows. Then RoPE: rot.apply in place on [L, heads, headDim] on both builds,
// against the plain-JS rotate_half loop with cos/sin tables precomputed once per shape.
import { init, simdSupported } from 'posenc';
// The same plain-JS loops as `npm run bench` (even dims only, as the page's shapes are).
import { plainEncode, plainEncodeHoisted } from '../../bench/encode.mjs';

// RoPE helpers: copies of bench/rotary.mjs's inverseFrequencies, tables, plainApply and applyError,
// unchanged. That module cannot be imported here: its top level runs the Node bench when it is the
// main script (reading `process`, which a worker has not) and keeps onnxruntime-web (a 28 MB wasm)
// in the bundle.

/** float64 inverse frequencies base^(-2i/d). */
function inverseFrequencies(d, base = 10000) {
  const w = new Float64Array(d / 2);
  for (let i = 0; i < d / 2; i++) w[i] = Math.pow(base, (-2 * i) / d);
  return w;
}

/** Float32 cos/sin tables [L, d/2] for positions 0..L-1, float64 angles. */
function tables(L, d) {
  const w = inverseFrequencies(d);
  const cos = new Float32Array(L * (d / 2));
  const sin = new Float32Array(L * (d / 2));
  for (let p = 0; p < L; p++) {
    for (let i = 0; i < d / 2; i++) {
      cos[p * (d / 2) + i] = Math.cos(p * w[i]);
      sin[p * (d / 2) + i] = Math.sin(p * w[i]);
    }
  }
  return { cos, sin };
}

/** The loop an app writes: rotate_half on [L, H, d] in place with precomputed [L, d/2] tables. */
function plainApply(x, L, H, d, cos, sin) {
  const half = d / 2;
  for (let p = 0; p < L; p++) {
    const t = p * half;
    for (let h = 0; h < H; h++) {
      const o = (p * H + h) * d;
      for (let i = 0; i < half; i++) {
        const c = cos[t + i];
        const s = sin[t + i];
        const a = x[o + i];
        const b = x[o + i + half];
        x[o + i] = a * c - b * s;
        x[o + i + half] = b * c + a * s;
      }
    }
  }
  return x;
}

/** Max |y - R(p) x| / max(1, |pair|) over sampled rows, in float64 (half layout, offset). */
function applyError(y, x, L, H, d, offset = 0) {
  const w = inverseFrequencies(d);
  const half = d / 2;
  let worst = 0;
  const rows = new Set([0, L - 1]);
  for (let k = 0; k < 24; k++) rows.add(Math.floor((k * (L - 1)) / 23));
  for (const p of rows) {
    for (let h = 0; h < H; h += Math.max(1, H >> 2)) {
      const o = (p * H + h) * d;
      for (let i = 0; i < half; i++) {
        const a = (offset + p) * w[i];
        const x1 = x[o + i];
        const x2 = x[o + i + half];
        const norm = Math.max(1, Math.hypot(x1, x2));
        const e1 = Math.abs(y[o + i] - (x1 * Math.cos(a) - x2 * Math.sin(a))) / norm;
        const e2 = Math.abs(y[o + i + half] - (x2 * Math.cos(a) + x1 * Math.sin(a))) / norm;
        worst = Math.max(worst, e1, e2);
      }
    }
  }
  return worst;
}

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
      const source = new Float32Array(n);
      for (let i = 0; i < n; i++) source[i] = Math.fround(Math.sin(i * 0.7) * 2);
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
