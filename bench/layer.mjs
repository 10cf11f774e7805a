// Benchmark of one Transformer encoder layer: posenc (wasm SIMD) vs onnxruntime-web (wasm
// backend, one thread, the layer exported from PyTorch by tests/fixtures/layer/export_onnx.py)
// vs TensorFlow.js (wasm backend) composed from ops. Same weights (the LCG of
// tests/fixtures/layer/lcg.py), same input, each checked against PyTorch's own output
// (tests/fixtures/layer/<case>.json).
//
//   node bench/layer.mjs [--positions-only] [--quick]
//   (or import { benchLayer, benchPositionSteps } and pass the posenc API object)
//
// Reports the median ms per forward, GFLOP/s (matrix products only: 2 L d (3d) + 2 L d d +
// 4 L d ff + 4 L L d), the ratio to onnxruntime-web and the max abs error vs PyTorch.
//
// Then the position-step cases (POSITION_CASES): tiny, small and long (d 128, 4 heads, ff 512,
// 2048 tokens) post-norm layers with no step, rotary (half, theta 10000) and ALiBi (symmetric),
// against onnxruntime-web running the committed bench/onnx/<size>-<method>.onnx (export_onnx.py
// --positional: the PyTorch reference of tests/fixtures/layer/positional_layer.py). posenc runs
// through its JS API (encoderLayer with config.position); the error column is max |posenc - ORT|.
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lcgValues, layerState } from '../tests/fixtures/layer/lcg.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CASES = [
  { name: 'tiny-post-relu', label: 'tiny (d=64, 4 heads, ff=256, 32 tokens)', runs: 400 },
  { name: 'small-post-relu', label: 'small (d=256, 8 heads, ff=1024, 128 tokens)', runs: 40 },
];
const POSITION_CASES = [
  { size: 'tiny', d: 64, heads: 4, ff: 256, L: 32, runs: 400, label: 'tiny (d=64, 4 heads, ff=256, 32 tokens)' },
  { size: 'small', d: 256, heads: 8, ff: 1024, L: 128, runs: 40, label: 'small (d=256, 8 heads, ff=1024, 128 tokens)' },
  { size: 'long', d: 128, heads: 4, ff: 512, L: 2048, runs: 7, label: 'long (d=128, 4 heads, ff=512, 2048 tokens)' },
];
const METHODS = ['none', 'rotary', 'alibi'];
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
};
export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < b.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d;
  }
  return m;
}
async function time(fn, runs) {
  for (let i = 0; i < Math.max(5, runs / 10); i++) await fn();
  const t = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

function onnxPath(name) {
  const dir = join(ROOT, 'build', 't-onnx');
  const file = join(dir, `${name}.onnx`);
  if (!existsSync(file)) {
    execFileSync('/usr/bin/python3', [join(ROOT, 'tests/fixtures/layer/export_onnx.py'), dir], {
      stdio: 'ignore',
    });
  }
  return file;
}

// TensorFlow.js: the same layer composed from ops (post-norm, relu).
function tfjsLayer(tf, cfg, w) {
  const { dModel: d, heads: h, ffDim: ff } = cfg;
  const dh = d / h;
  const T = (name, shape) => tf.tensor(w[name], shape);
  const wIn = T('self_attn.in_proj_weight', [3 * d, d]), bIn = T('self_attn.in_proj_bias', [3 * d]);
  const wOut = T('self_attn.out_proj.weight', [d, d]), bOut = T('self_attn.out_proj.bias', [d]);
  const w1 = T('linear1.weight', [ff, d]), b1 = T('linear1.bias', [ff]);
  const w2 = T('linear2.weight', [d, ff]), b2 = T('linear2.bias', [d]);
  const n1w = T('norm1.weight', [d]), n1b = T('norm1.bias', [d]);
  const n2w = T('norm2.weight', [d]), n2b = T('norm2.bias', [d]);
  // Functional ops only (tfjs-core without the chained-op registrations).
  const norm = (v, g, b) => {
    const { mean, variance } = tf.moments(v, -1, true);
    return tf.add(tf.mul(tf.mul(tf.sub(v, mean), tf.rsqrt(tf.add(variance, cfg.layerNormEps))), g), b);
  };
  const linear = (v, wt, bias) => tf.add(tf.matMul(v, wt, false, true), bias);
  const scale = Math.fround(Math.sqrt(dh));
  return (xData, length) => tf.tidy(() => {
    const x = tf.tensor(xData, [length, d]);
    const [q, k, v] = tf.split(linear(x, wIn, bIn), 3, 1);
    const heads = (t) => tf.transpose(tf.reshape(t, [length, h, dh]), [1, 0, 2]);
    const p = tf.softmax(tf.matMul(heads(tf.div(q, scale)), heads(k), false, true), -1);
    const o = tf.reshape(tf.transpose(tf.matMul(p, heads(v)), [1, 0, 2]), [length, d]);
    const x1 = norm(tf.add(x, linear(o, wOut, bOut)), n1w, n1b);
    const f = linear(tf.relu(linear(x1, w1, b1)), w2, b2);
    return norm(tf.add(x1, f), n2w, n2b);
  });
}

/** Runs the benchmark; returns one row per (case, implementation), the position-step cases
 * (benchPositionSteps) last unless positions is false. */
export async function benchLayer({ posenc, log = console.log, quick = false, positions = true } = {}) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const tf = await import('@tensorflow/tfjs-core');
  const tfwasm = await import('@tensorflow/tfjs-backend-wasm');
  tfwasm.setWasmPaths(pathToFileURL(join(ROOT, 'node_modules/@tensorflow/tfjs-backend-wasm/dist')).href + '/');
  tfwasm.setThreadsCount?.(1);
  await tf.setBackend('wasm');
  await tf.ready();

  const rows = [];
  for (const c of CASES) {
    const fx = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/layer', `${c.name}.json`), 'utf8'));
    const cfg = fx.config;
    const L = fx.length;
    const d = cfg.dModel;
    const weights = layerState(fx.seed, d, cfg.ffDim);
    const x = lcgValues(fx.seed * 100 + 99, L * d, 1);
    const expected = fx.expected;
    const flops = 2 * L * d * 3 * d + 2 * L * d * d + 4 * L * d * cfg.ffDim + 4 * L * L * d;
    const results = [];

    const layer = posenc.encoderLayer({ config: cfg, weights });
    const pOut = layer.forward(x);
    results.push({ impl: 'posenc (wasm SIMD)', ms: await time(() => layer.forward(x), c.runs), err: maxAbsDiff(pOut, expected) });
    layer.dispose();

    const session = await ort.InferenceSession.create(readFileSync(onnxPath(c.name)), {
      executionProviders: ['wasm'],
    });
    const feeds = { x: new ort.Tensor('float32', x, [1, L, d]) };
    const oOut = (await session.run(feeds)).y.data;
    results.push({ impl: 'onnxruntime-web 1.30 (wasm, 1 thread)', ms: await time(() => session.run(feeds), c.runs), err: maxAbsDiff(oOut, expected) });
    await session.release();

    const run = tfjsLayer(tf, cfg, weights);
    const tOut = run(x, L).dataSync();
    results.push({ impl: 'TensorFlow.js 4.22 (wasm)', ms: await time(() => run(x, L).dataSync(), Math.max(10, c.runs / 4)), err: maxAbsDiff(tOut, expected) });

    const ortMs = results[1].ms;
    log(`\n${c.label}: ${(flops / 1e6).toFixed(1)} MFLOP per forward`);
    log('implementation                          median ms   GFLOP/s   vs ORT   max|err| vs PyTorch');
    for (const r of results) {
      r.case = c.name;
      r.gflops = flops / (r.ms * 1e6);
      r.ratioToOrt = ortMs / r.ms;
      log(`${r.impl.padEnd(40)}${r.ms.toFixed(3).padStart(9)}${r.gflops.toFixed(2).padStart(10)}` +
        `${(r.ratioToOrt.toFixed(2) + 'x').padStart(9)}   ${r.err.toExponential(2)}`);
      rows.push(r);
    }
  }
  if (positions) rows.push(...(await benchPositionSteps({ posenc, log, quick })));
  return rows;
}

// The ONNX feeds of a position-step case: rotary cos/sin [L, head_dim] in the half layout from
// float64 angles (as posenc computes them), ALiBi positions 0..L-1.
function positionFeeds(ort, c, method, x) {
  const feeds = { x: new ort.Tensor('float32', x, [1, c.L, c.d]) };
  const hd = c.d / c.heads;
  if (method === 'rotary') {
    const cos = new Float32Array(c.L * hd), sin = new Float32Array(c.L * hd);
    for (let p = 0; p < c.L; p++) {
      for (let i = 0; i < hd / 2; i++) {
        const angle = p * 10000 ** ((-2 * i) / hd);
        cos[p * hd + i] = cos[p * hd + i + hd / 2] = Math.cos(angle);
        sin[p * hd + i] = sin[p * hd + i + hd / 2] = Math.sin(angle);
      }
    }
    feeds.cos = new ort.Tensor('float32', cos, [c.L, hd]);
    feeds.sin = new ort.Tensor('float32', sin, [c.L, hd]);
  }
  if (method === 'alibi') feeds.positions = new ort.Tensor('float32', Float32Array.from({ length: c.L }, (_, i) => i), [c.L]);
  return feeds;
}

/** The position-step cases: posenc's JS API against onnxruntime-web. */
export async function benchPositionSteps({ posenc, log = console.log, quick = false } = {}) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const rows = [];
  for (const c of POSITION_CASES) {
    const x = lcgValues(1 * 100 + 99, c.L * c.d, 1); // layer_input(1, L, d)
    const flops = 2 * c.L * c.d * 3 * c.d + 2 * c.L * c.d * c.d + 4 * c.L * c.d * c.ff + 4 * c.L * c.L * c.d;
    const runs = quick ? Math.max(3, Math.floor(c.runs / 4)) : c.runs;
    log(`\n${c.label}, position steps: ${(flops / 1e6).toFixed(1)} MFLOP per forward (err: max |posenc - ORT|)`);
    log('step     implementation                          median ms   GFLOP/s   vs ORT   max|err|');
    for (const method of METHODS) {
      const session = await ort.InferenceSession.create(readFileSync(join(ROOT, 'bench/onnx', `${c.size}-${method}.onnx`)), {
        executionProviders: ['wasm'],
      });
      const feeds = positionFeeds(ort, c, method, x);
      const ortOut = (await session.run(feeds)).y.data;
      const ortMs = await time(() => session.run(feeds), runs);
      await session.release();
      const step = method === 'none' ? {} : method === 'rotary' ? { position: 'rotary', ropeTheta: 10000, rotaryLayout: 'half' } : { position: 'alibi', alibiMode: 'symmetric' };
      const layer = posenc.encoderLayer({ config: { dModel: c.d, heads: c.heads, ffDim: c.ff, ...step }, weights: layerState(1, c.d, c.ff) });
      const out = layer.forward(x);
      const ms = await time(() => layer.forward(x), runs);
      layer.dispose();
      const err = maxAbsDiff(out, ortOut);
      for (const r of [
        { impl: 'posenc (wasm SIMD, JS API)', ms, err },
        { impl: 'onnxruntime-web 1.30 (wasm, 1 thread)', ms: ortMs, err },
      ]) {
        r.case = `${c.size}-${method}`;
        r.gflops = flops / (r.ms * 1e6);
        r.ratioToOrt = ortMs / r.ms;
        log(`${method.padEnd(9)}${r.impl.padEnd(40)}${r.ms.toFixed(3).padStart(9)}${r.gflops.toFixed(2).padStart(10)}` +
          `${(r.ratioToOrt.toFixed(2) + 'x').padStart(9)}   ${r.err.toExponential(2)}`);
        rows.push(r);
      }
    }
  }
  return rows;
}

// The posenc API: the package build (dist/), else this repository's own wasm build (build/t-wasm
// or build/wasm) with bindings/js/layer.js attached.
async function loadPosenc() {
  const dist = join(ROOT, 'dist/node.js');
  if (existsSync(dist)) {
    const { init } = await import(pathToFileURL(dist).href);
    const api = await init();
    if (typeof api.encoderLayer === 'function') return { api, from: 'dist/node.js' };
  }
  for (const dir of ['build/t-wasm', 'build/wasm']) {
    const glue = join(ROOT, dir, 'posenc_simd.mjs');
    if (!existsSync(glue)) continue;
    const factory = (await import(pathToFileURL(glue).href)).default;
    const Module = await factory({ wasmBinary: readFileSync(join(ROOT, dir, 'posenc_simd.wasm')) });
    const { createApi } = await import(pathToFileURL(join(ROOT, 'bindings/js/api.js')).href);
    const { attachLayerApi } = await import(pathToFileURL(join(ROOT, 'bindings/js/layer.js')).href);
    const api = createApi(Module, { simd: true, families: [attachLayerApi] });
    return { api, from: `${dir}/posenc_simd.mjs` };
  }
  throw new Error('no posenc build with the layer API: run `npm run build` or build build/t-wasm');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { api, from } = await loadPosenc();
  console.log(`posenc from ${from}; Node ${process.version}`);
  const quick = process.argv.includes('--quick');
  if (process.argv.includes('--positions-only')) await benchPositionSteps({ posenc: api, quick });
  else await benchLayer({ posenc: api, quick });
}
