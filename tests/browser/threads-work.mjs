// The work of tests/browser/threads.test.mjs: the same functions run in Node (the reference: one
// thread, SIMD), on an isolated page's main thread and in a module Web Worker with init({ threads }),
// so the results can be compared bit for bit. The tables are big (an encode of 20000 x 512 is 40 MB):
// each result travels back as its length, its first values and the SHA-256 of its bytes
// (crypto.subtle, the same in Node, pages and workers). A plain ES module: no Node or DOM imports.
import { layerInput, layerState, lcgValues } from '../fixtures/layer/lcg.mjs';

/** A deterministic pseudo-random Float32Array in [-1, 1): the fixtures' LCG. */
const noise = (n, seed) => lcgValues(seed, n, 1);

/** The layer of the comparison: big enough that its products and softmax rows are split. */
export const LAYER = Object.freeze({ seed: 5, dModel: 128, heads: 4, ffDim: 256, length: 400 });

/** What the main entry computes (every call big enough to be split between the threads). */
export function computeMain(pe) {
  const d = 512;
  const positions = Float64Array.from({ length: 3000 }, (_, i) => (i * 7919) % 1000003);
  const { seed, dModel, heads, ffDim, length } = LAYER;
  const layer = pe.encoderLayer({ config: { dModel, heads, ffDim }, weights: layerState(seed, dModel, ffDim) });
  const x = layerInput(seed + 1, length, dModel);
  const rot = pe.rotary({ headDim: 128 });
  const results = {
    encode: pe.encode(20000, d),
    positions: pe.encode(3000, d, { positions }),
    addTo: pe.addTo(noise(9000 * d, 1), d, { scale: Math.sqrt(d) }),
    concat: pe.concat(noise(9000 * 64, 2), 64, d),
    forward: layer.forward(x),
    forwardCausal: layer.forward(x, { causal: true }),
    rotApply: rot.apply(noise(512 * 8 * 128, 3), { heads: 8 }),
  };
  layer.dispose();
  rot.dispose();
  return results;
}

/** What posenc/encoding computes. */
export function computeEncoding(pe) {
  return {
    encode: pe.encode(10000, 384),
    addTo: pe.addTo(noise(9000 * 256, 4), 256, { scale: 16, offset: 7 }),
  };
}

/** { name: { length, head: first 4 values, sha256 } } for { name: Float32Array }. */
export async function digest(results) {
  const out = {};
  for (const [name, value] of Object.entries(results)) {
    const bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    out[name] = {
      length: value.length,
      head: Array.from(value.subarray(0, 4)),
      sha256: Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join(''),
    };
  }
  return out;
}

/** Rejects with `what` timed out after `ms` instead of waiting forever. */
export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Runs threads-worker.mjs in a module Web Worker of this page with init(options) and returns what
 * it posts back (rejects if it does not answer within ms); the worker is always terminated.
 */
export async function inModuleWorker(options, ms) {
  const worker = new Worker('/tests/browser/threads-worker.mjs', { type: 'module' });
  try {
    return await withTimeout(
      new Promise((resolve, reject) => {
        worker.onmessage = ({ data }) => resolve(data);
        worker.onerror = (event) => reject(new Error(`worker: ${event.message}`));
        worker.postMessage({ options });
      }),
      ms,
      'the module worker',
    );
  } finally {
    worker.terminate();
  }
}
