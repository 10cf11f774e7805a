// Issue 26: the threaded build against one thread, side by side in one process (part of `npm run
// bench`, or `node bench/run.mjs --only threads`, or `node bench/threads.mjs [--quick]`):
//   encode into out   100000 x 512 and 8192 x 1024, a reused output array
//   addTo             8192 x 1024, in place
//   rot.apply         [4096, 32, 128] in place (float32 and float16), and rot.cosSin(32768) into out
//                     (float32 and float16; shown, not targets)
//   multimodal cosSin Qwen2-VL's cos and sin at 32768 (t, h, w) positions into out (shown)
//   a copy between a JS array and shared memory against the same copy between ArrayBuffers (the
//   threaded build's memory is a SharedArrayBuffer, which V8 copies more slowly: shown)
//   the layer         against onnxruntime-web with the same threads (bench/threads_layer.mjs)
// each by an instance with threads: 1 and one with threads: N (N = 2 unless POSENC_BENCH_THREADS
// says otherwise), timed in alternation (bench/encode.mjs timeAlternating); the ratio is the
// N-thread median over the 1-thread median (target <= 0.65 on two cores). Outputs are compared
// bit for bit before anything is timed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { timeAlternating } from './encode.mjs';
import { threadedLayerTargets } from './threads_layer.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// Qwen2-VL-2B's text RoPE (head dim 128, mrope_section [16, 24, 24]).
const QWEN2_VL = {
  model_type: 'qwen2_vl', hidden_size: 1536, num_attention_heads: 12, rope_theta: 1000000,
  rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] },
};

function sameBits(a, b) {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * @param {object} o
 * @param {(options?: object) => Promise<object>} o.init  the entry's init
 * @returns {Promise<{ rows: object[], targets: object[] }>}
 */
export async function benchThreads({ init, log = () => {}, quick = false }) {
  const threads = Number(process.env.POSENC_BENCH_THREADS) || 2;
  const one = await init({ threads: 1 });
  const many = await init({ threads });
  const rows = [];
  const targets = [];
  const timing = quick ? { budgetMs: 200, minRuns: 3, maxRuns: 10 } : { budgetMs: 800, minRuns: 7, maxRuns: 40 };
  log(`${cpus().length} cores; 1 thread against ${threads} threads`);
  try {
    const cases = [
      ['encode into out', 100000, 512],
      ['encode into out', 8192, 1024],
      ['addTo', 8192, 1024],
      ['rot.apply [L, 32, 128]', 4096, 32 * 128],
      ['rot.apply float16 [L, 32, 128]', 4096, 32 * 128],
      ['rot.cosSin(L) into out', 32768, 2 * 128],
      ['rot.cosSin(L) float16 into out', 32768, 2 * 128],
      ['rot.cosSin(L) multimodal', 32768, 2 * 128],
      ['copy in and out, shared memory', 4096, 32 * 128],
    ];
    for (const [what, L, d] of cases) {
      const n = quick ? Math.min(L, 20000) : L;
      const shape = `${n} x ${d}`;
      let calls;
      if (what.startsWith('rot.apply')) {
        const r1 = one.rotary({ headDim: 128 });
        const rN = many.rotary({ headDim: 128 });
        // float16: bits in a Uint16Array, widened, rotated and rounded back by the core
        const half = what.includes('float16');
        const o = half ? { heads: 32, dtype: 'float16' } : { heads: 32 };
        const q1 = half ? new Uint16Array(n * d).fill(0x3800) : new Float32Array(n * d).fill(0.5);
        const qN = q1.slice();
        const same = (a, b) => (half ? a.every((v, i) => v === b[i]) : sameBits(a, b));
        if (!same(r1.apply(q1.slice(), o), rN.apply(qN.slice(), o))) throw new Error(`${what}: threads changed the bits`);
        calls = [() => r1.apply(q1, o), () => rN.apply(qN, o)];
      } else if (what.startsWith('rot.cosSin')) {
        // multimodal: text, then an image of 128 x 128 patches at one time step, then text
        const multimodal = what.endsWith('multimodal');
        const options = multimodal ? { config: QWEN2_VL } : { headDim: 128 };
        const r1 = one.rotary(options);
        const rN = many.rotary(options);
        const grid = (i, k) => (i < 8192 || i >= 8192 + 16384 ? i : k === 0 ? 8192 : 8192 + (k === 1 ? Math.floor((i - 8192) / 128) : (i - 8192) % 128));
        const rows = multimodal ? { positions: [0, 1, 2].map((k) => Float64Array.from({ length: n }, (_, i) => grid(i, k))) } : {};
        // float16: bits in Uint16Arrays (each share converts its own rows)
        const Out = what.includes('float16') ? Uint16Array : Float32Array;
        if (Out === Uint16Array) rows.dtype = 'float16';
        const o1 = { cos: new Out((n * d) / 2), sin: new Out((n * d) / 2) };
        const oN = { cos: new Out((n * d) / 2), sin: new Out((n * d) / 2) };
        r1.cosSin(n, { ...rows, out: o1 });
        rN.cosSin(n, { ...rows, out: oN });
        const same = (a, b) => (Out === Uint16Array ? a.every((v, i) => v === b[i]) : sameBits(a, b));
        if (!same(o1.cos, oN.cos) || !same(o1.sin, oN.sin)) throw new Error(`${what}: threads changed the bits`);
        calls = [() => r1.cosSin(n, { ...rows, out: o1 }), () => rN.cosSin(n, { ...rows, out: oN })];
      } else if (what.startsWith('copy')) {
        // What the threaded build's calls pay for each chunk they copy: 64K floats in and out.
        const x = new Float32Array(n * d).fill(0.5);
        const chunk = 65536;
        const plain = new Float32Array(new ArrayBuffer(chunk * 4));
        const shared = new Float32Array(new SharedArrayBuffer(chunk * 4));
        const copy = (h) => () => {
          for (let i = 0; i < x.length; i += chunk) {
            h.set(x.subarray(i, i + chunk));
            x.set(h, i);
          }
        };
        calls = [copy(plain), copy(shared)];
      } else if (what === 'addTo') {
        const x1 = new Float32Array(n * d).fill(0.25);
        const x2 = new Float32Array(n * d).fill(0.25);
        if (!sameBits(one.addTo(x1.slice(), d), many.addTo(x2.slice(), d))) throw new Error(`${what} ${shape}: threads changed the bits`);
        // scale 1 keeps the values bounded over repeated runs (each adds PE once more).
        calls = [() => one.addTo(x1, d), () => many.addTo(x2, d)];
      } else {
        const o1 = new Float32Array(n * d);
        const o2 = new Float32Array(n * d);
        if (!sameBits(one.encode(n, d, { out: o1 }), many.encode(n, d, { out: o2 }))) throw new Error(`${what} ${shape}: threads changed the bits`);
        calls = [() => one.encode(n, d, { out: o1 }), () => many.encode(n, d, { out: o2 })];
      }
      const ms = await timeAlternating(calls, timing);
      const ratio = ms[1] / ms[0];
      rows.push({ what, shape, threads, ms1: ms[0], msN: ms[1], ratio });
      const [a, b] = what.startsWith('copy') ? ['ArrayBuffer', 'shared'] : ['1 thread', `${threads} threads`];
      log(`${`${what} ${shape}`.padEnd(32)} ${a} ${ms[0].toFixed(2).padStart(8)} ms   ${b} ${ms[1].toFixed(2).padStart(8)} ms   ${ratio.toFixed(2)}x`);
      // (rot.apply, rot.cosSin and the copy: not targets of the issue, printed to show where the
      // threaded build's copy-bound calls stand)
      if (!what.startsWith('rot.') && !what.startsWith('copy')) {
        targets.push({ target: `${what} ${shape}: ${threads} threads take <= 0.65 of 1 thread (N-thread ms / 1-thread ms)`, value: ratio, ok: ratio <= 0.65 });
      }
    }
  } finally {
    many.dispose();
  }
  // The layer against onnxruntime-web with as many threads: a process of its own (ORT fixes its
  // thread count once per process).
  const file = join(tmpdir(), `posenc-threads-layer-${process.pid}.json`);
  const child = spawnSync(process.execPath, [join(here, 'threads_layer.mjs'), '--threads', String(threads), '--json', file, ...(quick ? ['--quick'] : [])], { stdio: 'inherit' });
  if (existsSync(file)) {
    const layerRows = JSON.parse(readFileSync(file, 'utf8'));
    rmSync(file);
    rows.push(...layerRows.map((r) => ({ what: 'layer', ...r })));
    targets.push(...threadedLayerTargets(layerRows));
  } else {
    log(`layer against onnxruntime-web skipped: bench/threads_layer.mjs ended with ${child.error?.message ?? child.signal ?? `exit ${child.status}`}`);
  }
  return { rows, targets };
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { init } = await import('../dist/node.js');
  const { targets } = await benchThreads({ init, log: console.log, quick: process.argv.includes('--quick') });
  for (const t of targets) console.log(`${t.ok ? 'MET   ' : 'MISSED'} ${t.target} (${typeof t.value === 'number' ? t.value.toFixed(2) : t.value})`);
}
