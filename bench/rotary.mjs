// RoPE, ALiBi and 2D sin-cos, measured side by side in one run (part of `npm run bench`):
//   limit         the same bytes copied into wasm memory and back (for apply, in place), or
//                 written once in wasm memory and copied out (for the tables);
//   posenc        rot.apply in place, rot.cosSin, pe.alibiBias, pe.encode2d;
//   plain JS      the loop an app writes with precomputed cos/sin tables (LLaMA's rotate_half);
//   onnxruntime-web (wasm, one thread) its RotaryEmbedding operators: com.microsoft (contrib) and
//                 the ONNX opset-23 one, each a one-node model (bench/onnx_graph.mjs), timed
//                 through session.run as an app calls it.
// Every output is checked against float64 before it is timed. Each limit is timed in alternation
// with posenc's row it is the yardstick of (bench/encode.mjs timeAlternating), so that the drifts
// of a shared machine fall on both sides of the ratio alike.
//
//   node bench/rotary.mjs [--quick]     (or import { benchRotary } and pass a posenc instance)
import { oneNodeModel } from './onnx_graph.mjs';
import { timeAlternating, timeIt } from './encode.mjs';
import { applyError, plainApply, sampleInput, tables } from './rope_plain.mjs';

export const APPLY_SHAPES = [
  [4096, 32, 128],
  [2048, 8, 64],
];

async function ortPeer(log) {
  try {
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = 1;
    return ort;
  } catch (err) {
    log(`onnxruntime-web unavailable: ${err.message}`);
    return null;
  }
}

async function ortRotary(ort, variant, L, H, d) {
  const x = ['x', 'float32', [1, L, H * d]];
  const pos = ['pos', 'int64', [1, L]];
  const cos = ['cos', 'float32', [L, d / 2]];
  const sin = ['sin', 'float32', [L, d / 2]];
  const common = { opType: 'RotaryEmbedding', outputs: [['y', 'float32', [1, L, H * d]]], intAttributes: { num_heads: H, interleaved: 0 } };
  const bytes =
    variant === 'com.microsoft'
      ? oneNodeModel({ ...common, domain: 'com.microsoft', opset: 1, inputs: [x, pos, cos, sin] })
      : oneNodeModel({ ...common, opset: 23, inputs: [x, cos, sin, pos] });
  return ort.InferenceSession.create(bytes);
}

const gbps = (bytes, ms) => bytes / (ms * 1e6);

/**
 * @returns {{ rows: object[], targets: object[] }}
 */
/**
 * One decoding step, rot.apply on [1, 32, 128] at a new position each call, in microseconds per
 * call: the next position, as decoding goes (the target), and a random one (every call a new
 * block: the anchor's sincos each time). null without pe.rotary.
 */
export async function timeDecodingStep(pe, quick = false) {
  if (typeof pe.rotary !== 'function') return null;
  const rot = pe.rotary({ headDim: 128 });
  try {
    const x = new Float32Array(32 * 128).fill(0.5);
    const calls = quick ? 2000 : 20000;
    const timeSteps = async (next) => {
      const run = () => {
        let p = 12345;
        for (let k = 0; k < calls; k++) {
          p = next(p);
          rot.apply(x, { heads: 32, offset: p });
        }
      };
      return ((await timeIt(run, { budgetMs: 0, minRuns: 7, maxRuns: 7, warmup: 2 })) * 1000) / calls;
    };
    const usNext = await timeSteps((p) => p + 1);
    const usRandom = await timeSteps((p) => (p * 1103515245 + 12345) % 16777216);
    return { usNext, usRandom };
  } finally {
    rot.dispose();
  }
}

export async function benchRotary({ pe, log = () => {}, quick = false, decoding = null }) {
  const rows = [];
  const targets = [];
  const M = pe._module;
  const timing = quick ? { budgetMs: 150, minRuns: 3, maxRuns: 10 } : { budgetMs: 600, minRuns: 5, maxRuns: 30 };
  const add = (shape, method, ms, error, extra = {}) => {
    const row = { shape, method, ms, error, ...extra };
    rows.push(row);
    const ratio = extra.ratio === undefined ? '' : `  ${extra.ratio.toFixed(2)}x limit`;
    log(`${shape.padEnd(16)} ${method.padEnd(44)} ${ms.toFixed(3).padStart(9)} ms${extra.bytes ? ` ${gbps(extra.bytes, ms).toFixed(2).padStart(6)} GB/s` : ''}  err ${error === null ? '-' : error.toExponential(1)}${ratio}`);
    return row;
  };
  const target = (text, value, ok) => targets.push({ target: text, value, ok });
  const hasRotary = typeof pe.rotary === 'function';
  if (!hasRotary) log('pe.rotary is not in this build: posenc rows skipped');
  const ort = await ortPeer(log);

  // Heap helpers for the limits (pointers re-read after any growth).
  const withHeap = async (bytes, fn) => {
    const ptr = M._malloc(bytes);
    if (!ptr) throw new Error(`bench: cannot allocate ${bytes} bytes of wasm memory`);
    try {
      return await fn(ptr);
    } finally {
      M._free(ptr);
    }
  };
  // The limits, each a function to time beside posenc's (timeAlternating): copy in + copy out of
  // `data` through wasm memory at ptr, and write once + copy to new.
  const copyRun = (data, ptr) => () => {
    M.HEAPF32.set(data, ptr >> 2);
    data.set(M.HEAPF32.subarray(ptr >> 2, (ptr >> 2) + data.length));
  };
  // "Copy to new": the arrays are allocated inside the timed run, as posenc's results are (and as
  // bench/encode.mjs's limit of the same name does): a fresh 128 MB array costs its page faults
  // on first write, which on this VM can take longer than the copy itself. (Until 2026-11-23 this
  // limit reused arrays allocated once, outside the timing, and understated the limit.)
  const writeRun = (n, copies, ptr) => () => {
    const heap = M.HEAPF32;
    heap.fill(0.5, ptr >> 2, (ptr >> 2) + n);
    const outs = [];
    for (let k = 0; k < copies; k++) {
      const out = new Float32Array(n / copies);
      out.set(heap.subarray((ptr >> 2) + (k * n) / copies, (ptr >> 2) + ((k + 1) * n) / copies));
      outs.push(out);
    }
    return outs;
  };

  // One decoding step first, while the process is fresh (after the large shapes and
  // onnxruntime-web's sessions the same loop measured up to 1 us slower per call); bench/run.mjs
  // times it before everything else and passes it in.
  const steps = hasRotary ? (decoding ?? (await timeDecodingStep(pe, quick))) : null;
  if (steps) {
    add('[1, 32, 128]', 'posenc rot.apply, one decoding step (next position)', steps.usNext / 1000, null);
    add('[1, 32, 128]', 'posenc rot.apply, one step at a random position', steps.usRandom / 1000, null);
    target('one decoding step [1, 32, 128] at the next position < 2 us', steps.usNext, steps.usNext < 2);
  }


  const applyShapes = quick ? [APPLY_SHAPES[1]] : APPLY_SHAPES;
  for (const [L, H, d] of applyShapes) {
    const shape = `[${L}, ${H}, ${d}]`;
    const n = L * H * d;
    const source = sampleInput(n);
    const x = source.slice();
    const rot = hasRotary ? pe.rotary({ headDim: d }) : null;
    try {
      // The limit and posenc's apply in alternation (timeAlternating), the error checked first.
      let limitMs = 0;
      let ms = 0;
      const err = rot ? applyError(rot.apply(source.slice(), { heads: H }), source, L, H, d) : null;
      await withHeap(n * 4, async (ptr) => {
        if (rot) [limitMs, ms] = await timeAlternating([copyRun(x, ptr), () => rot.apply(x, { heads: H })], timing);
        else limitMs = await timeIt(copyRun(x, ptr), timing);
      });
      const limit = add(shape, 'limit: copy in + copy out', limitMs, null, { bytes: 8 * n });

      const { cos, sin } = tables(L, d);
      const plainErr = applyError(plainApply(source.slice(), L, H, d, cos, sin), source, L, H, d);
      const plainMs = await timeIt(() => plainApply(x, L, H, d, cos, sin), timing);
      add(shape, 'plain JS, precomputed cos/sin tables', plainMs, plainErr, { bytes: 8 * n, ratio: plainMs / limit.ms });

      const ortRows = [];
      if (ort) {
        for (const variant of ['com.microsoft', 'opset 23']) {
          try {
            const session = await ortRotary(ort, variant, L, H, d);
            const positions = new BigInt64Array(L);
            for (let p = 0; p < L; p++) positions[p] = BigInt(p);
            const feeds = {
              x: new ort.Tensor('float32', source, [1, L, H * d]),
              pos: new ort.Tensor('int64', positions, [1, L]),
              cos: new ort.Tensor('float32', cos, [L, d / 2]),
              sin: new ort.Tensor('float32', sin, [L, d / 2]),
            };
            const y = (await session.run(feeds)).y.data;
            const ortErr = applyError(y, source, L, H, d);
            const ortMs = await timeIt(() => session.run(feeds), { ...timing, maxRuns: quick ? 3 : 10 });
            ortRows.push(add(shape, `onnxruntime-web RotaryEmbedding (${variant})`, ortMs, ortErr, { bytes: 8 * n, ratio: ortMs / limit.ms }));
            await session.release();
          } catch (error) {
            log(`onnxruntime-web RotaryEmbedding (${variant}) failed: ${error.message}`);
          }
        }
      }

      if (rot) {
        const ours = add(shape, 'posenc rot.apply (in place)', ms, err, { bytes: 8 * n, ratio: ms / limit.ms });
        target(`rot.apply ${shape}: <= 1.5x copy in + out`, ours.ratio, ours.ratio <= 1.5);
        target(`rot.apply ${shape}: faster than plain JS (JS ms / posenc ms)`, plainMs / ms, plainMs / ms > 1);
        for (const r of ortRows) target(`rot.apply ${shape}: faster than ${r.method.replace('onnxruntime-web ', 'ORT ')} (ORT ms / posenc ms)`, r.ms / ms, r.ms / ms > 1);
        target(`rot.apply ${shape}: within 2^-22 x pair norm`, err, err <= 2 ** -22);
      } else {
        target(`rot.apply ${shape}: measured`, 'pe.rotary missing', false);
      }
    } finally {
      rot?.dispose();
    }
  }

  // Explicit positions against an offset at [2048, 32, 128] (HF's position_ids; a multimodal RoPE's
  // three rows t, h, w as Qwen2-VL's: text, then a 32 x 32 image grid, then text), in alternation.
  if (hasRotary) {
    const [L, H, d] = [2048, 32, 128];
    const shape = `[${L}, ${H}, ${d}]`;
    const source = sampleInput(L * H * d);
    const x = source.slice();
    const plain = Float64Array.from({ length: L }, (_, i) => 100 + i);
    const rows3 = [new Float64Array(L), new Float64Array(L), new Float64Array(L)];
    for (let i = 0; i < L; i++) {
      const image = i >= 512 && i < 512 + 1024;
      const k = i - 512;
      rows3[0][i] = image ? 512 : i < 512 ? i : i - 1024 + 32;
      rows3[1][i] = image ? 512 + Math.floor(k / 32) : rows3[0][i];
      rows3[2][i] = image ? 512 + (k % 32) : rows3[0][i];
    }
    const rot = pe.rotary({ headDim: d });
    const mrope = pe.rotary({ config: { model_type: 'qwen2_vl', hidden_size: H * d, num_attention_heads: H, rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] } } });
    try {
      const [offsetMs, positionsMs, mropeMs] = await timeAlternating([
        () => rot.apply(x, { heads: H, offset: 100 }),
        () => rot.apply(x, { heads: H, positions: plain }),
        () => mrope.apply(x, { heads: H, positions: rows3 }),
      ], timing);
      add(shape, 'posenc rot.apply, offset', offsetMs, null, { bytes: 8 * L * H * d });
      add(shape, 'posenc rot.apply, positions', positionsMs, null, { bytes: 8 * L * H * d });
      add(shape, 'posenc rot.apply, multimodal [t, h, w]', mropeMs, null, { bytes: 8 * L * H * d });
      target(`rot.apply ${shape} with positions: <= 1.5x with offset`, positionsMs / offsetMs, positionsMs / offsetMs <= 1.5);
      target(`rot.apply ${shape} with multimodal [t, h, w] positions: <= 1.5x with offset`, mropeMs / offsetMs, mropeMs / offsetMs <= 1.5);
    } finally {
      rot.dispose();
      mrope.dispose();
    }
  }

  // Batches (issue 25) at [4, 512, 32, 128], the size of [2048, 32, 128]: order 'bshd' and 'bhsd'
  // (each head its own call into the core, so its sines once per head) against 'shd' of the same
  // total; and cosSin in ONNX Runtime's cache layout into reused arrays against the plain table.
  if (hasRotary) {
    const [B, L, H, d] = [4, 512, 32, 128];
    const shape = `[${B}, ${L}, ${H}, ${d}]`;
    const x = sampleInput(B * L * H * d);
    const offsets = [0, 1, 2, 3];
    const rot = pe.rotary({ headDim: d });
    const out = { cos: new Float32Array(4096 * (d / 2)), sin: new Float32Array(4096 * (d / 2)) };
    try {
      const [shdMs, bshdMs, bhsdMs] = await timeAlternating([
        () => rot.apply(x, { heads: H, offset: 0 }),
        () => rot.apply(x, { order: 'bshd', batch: B, heads: H, offset: offsets }),
        () => rot.apply(x, { order: 'bhsd', batch: B, heads: H, offset: offsets }),
      ], timing);
      add(shape, "posenc rot.apply, 'shd' [2048, 32, 128]", shdMs, null, { bytes: 8 * x.length });
      add(shape, "posenc rot.apply, order 'bshd' (ratio: vs 'shd')", bshdMs, null, { bytes: 8 * x.length, ratio: bshdMs / shdMs });
      add(shape, "posenc rot.apply, order 'bhsd' (ratio: vs 'shd')", bhsdMs, null, { bytes: 8 * x.length, ratio: bhsdMs / shdMs });
      target(`rot.apply ${shape} order 'bshd': <= 1.1x 'shd' of the same size`, bshdMs / shdMs, bshdMs / shdMs <= 1.1);
      target(`rot.apply ${shape} order 'bhsd': <= 1.5x 'shd' of the same size`, bhsdMs / shdMs, bhsdMs / shdMs <= 1.5);
      const [plainMs, ortMs] = await timeAlternating([() => rot.cosSin(4096), () => rot.cosSin(4096, { cache: 'ort', out })], timing);
      add('4096 x 128', 'posenc cosSin', plainMs, null, { bytes: 8 * 4096 * d });
      add('4096 x 64', "posenc cosSin, cache 'ort' + out (ratio: vs cosSin)", ortMs, null, { bytes: 4 * 4096 * d, ratio: ortMs / plainMs });
      target("cosSin 4096 cache 'ort' + out: <= 1.5x plain cosSin", ortMs / plainMs, ortMs / plainMs <= 1.5);
    } finally {
      rot.dispose();
    }
  }

  // Tables at the write-once-and-copy pace.
  const tableCases = [
    ['cosSin', '4096 x 128 (x2)', 4096 * 128 * 2, 2, () => {
      const rot = pe.rotary({ headDim: 128 });
      return { run: () => rot.cosSin(4096), done: () => rot.dispose() };
    }],
    ['alibiBias', '32 x 1024 x 1024', 32 * 1024 * 1024, 1, () => ({ run: () => pe.alibiBias(32, 1024, 1024), done: () => {} })],
    ['encode2d', '64 x 64 x 768', 64 * 64 * 768, 1, () => ({ run: () => pe.encode2d(64, 64, 768), done: () => {} })],
  ];
  for (const [fn, shape, n, copies, make] of tableCases) {
    const available = typeof pe[fn] === 'function' || (fn === 'cosSin' && hasRotary);
    const c = available ? make() : null;
    try {
      // The limit and posenc's table in alternation (timeAlternating).
      const [limitMs, ms] = await withHeap(n * 4, async (ptr) =>
        c ? timeAlternating([writeRun(n, copies, ptr), c.run], timing) : [await timeIt(writeRun(n, copies, ptr), timing), 0],
      );
      const limit = add(shape, `limit: write once + copy to new (${copies} array${copies > 1 ? 's' : ''})`, limitMs, null, { bytes: 4 * n });
      if (!c) {
        target(`${fn} ${shape}: measured`, `pe.${fn} missing`, false);
        continue;
      }
      const row = add(shape, `posenc ${fn}`, ms, null, { bytes: 4 * n, ratio: ms / limit.ms });
      target(`${fn} ${shape}: <= 1.5x write once + copy`, row.ratio, row.ratio <= 1.5);
    } finally {
      c?.done();
    }
  }
  return { rows, targets };
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { init } = await import('../dist/node.js');
  const pe = await init();
  const { targets } = await benchRotary({ pe, log: console.log, quick: process.argv.includes('--quick') });
  for (const t of targets) console.log(`${t.ok ? 'MET   ' : 'MISSED'} ${t.target} (${typeof t.value === 'number' ? t.value.toPrecision(3) : t.value})`);
}
