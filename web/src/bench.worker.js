// The speed benchmark, run in a Web Worker so the page stays responsive. For each shape it times
// pe.encode on the SIMD build, on the baseline build, and plain JavaScript twice: the formula as
// written (a Math.pow per element, the yardstick of `npm run bench`'s 100x target) and the same
// with the frequencies hoisted out of the row loop. Each table is checked against the float64
// formula on sampled rows. Then RoPE: rot.apply in place on [L, heads, headDim] on both builds,
// against the plain-JS rotate_half loop with cos/sin tables precomputed once per shape.
//
// Sent { kind: 'threads', threads, cases } instead (section 6's "1 thread against N"), it loads
// posenc's threaded build, init({ threads }) (its pool of threads - 1 workers is nested in this
// one), beside the one-thread SIMD build, and times both on each case in alternation, as
// `npm run bench` does (bench/threads.mjs). Only where the page is cross-origin isolated.
import { init, simdSupported } from 'posenc';
// The same plain-JS loops as `npm run bench` (even dims only, as the page's shapes are), and its
// alternating timer.
import { plainEncode, plainEncodeHoisted, timeAlternating } from '../../bench/encode.mjs';
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

/** A hash of the bits of a Float32Array (FNV-1a over its 32-bit words): the 1-thread and
 * N-thread results compared without a second copy of a 200 MB table. */
function bitsHash(a) {
  const words = new Uint32Array(a.buffer, a.byteOffset, a.length);
  let h = 0x811c9dc5;
  for (let i = 0; i < words.length; i++) h = Math.imul(h ^ words[i], 0x01000193);
  return h >>> 0;
}

/** 1 thread against `threads` on each [kind, L, D] of `cases` ('encode' into a reused out,
 * 'addTo' in place, 'rope' / 'rope-f16': rot.apply in place on [L, 32, 128] float32 / float16
 * queries). Each result is first checked to be the same bits on both instances. */
async function compareThreads({ threads, cases, budgetMs = 600 }) {
  const one = await init({ simd: true });
  const many = await init({ threads });
  try {
    let done = 0;
    self.postMessage({ type: 'threads-start', total: cases.length, simd: many.simd, oneThread: one.threads, threads: many.threads });
    for (const [kind, length, dim] of cases) {
      let calls;
      let sameBits;
      if (kind === 'encode') {
        const out = new Float32Array(length * dim);
        const first = bitsHash(one.encode(length, dim, { out }));
        out.fill(0);
        sameBits = bitsHash(many.encode(length, dim, { out })) === first;
        calls = [() => one.encode(length, dim, { out }), () => many.encode(length, dim, { out })];
      } else if (kind === 'addTo') {
        const source = new Float32Array(length * dim);
        for (let i = 0; i < source.length; i++) source[i] = ((Math.imul(i, 2654435761) >>> 0) % 2001) / 1000 - 1;
        const x = source.slice();
        const first = bitsHash(one.addTo(x, dim));
        x.set(source);
        sameBits = bitsHash(many.addTo(x, dim)) === first;
        // each run adds the encoding once more (scale 1): the values stay bounded
        calls = [() => one.addTo(x, dim), () => many.addTo(x, dim)];
      } else if (kind === 'rope' || kind === 'rope-f16') {
        // queries [length, 32, 128] rotated in place (float16: bits in a Uint16Array)
        const half = kind === 'rope-f16';
        const options = half ? { heads: 32, dtype: 'float16' } : { heads: 32 };
        const [r1, rN] = [one, many].map((pe) => pe.rotary({ headDim: 128 }));
        const source = half ? new Uint16Array(length * dim) : new Float32Array(length * dim);
        for (let i = 0; i < source.length; i++) {
          const v = ((Math.imul(i, 2654435761) >>> 0) % 2001) / 1000 - 1;
          source[i] = half ? 0x3800 | (i & 1023) : v;
        }
        const q1 = source.slice();
        const qN = source.slice();
        const bits = (a) => bitsHash(half ? new Float32Array(a.buffer, a.byteOffset, a.length / 2) : a);
        sameBits = bits(r1.apply(q1, options)) === bits(rN.apply(qN, options));
        // each run rotates the same arrays again: a rotation keeps their values bounded
        calls = [() => r1.apply(q1, options), () => rN.apply(qN, options)];
      } else {
        throw new RangeError(`unknown task '${kind}'`);
      }
      const runs = { count: 0 };
      const counted = calls.map((fn) => () => {
        runs.count++;
        return fn();
      });
      const [ms1, msN] = await timeAlternating(counted, { budgetMs, minRuns: 5, maxRuns: 15 });
      done++;
      self.postMessage({
        type: 'threads-result',
        done,
        total: cases.length,
        // runs: timed runs per instance (the first call of each, a warm-up, is not timed)
        row: { kind, length, dim, threads: many.threads, ms1, msN, sameBits, runs: runs.count / 2 - 1 },
      });
    }
  } finally {
    many.dispose();
  }
  self.postMessage({ type: 'threads-done' });
}

self.onmessage = async (event) => {
  if (event.data.kind === 'threads') {
    try {
      await compareThreads(event.data);
    } catch (err) {
      self.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
    return;
  }
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
