// 16-bit outputs of issue 25, measured side by side in one run (part of `npm run bench`, or
// `node bench/run.mjs --only half`): each call with dtype 'float16' (and 'bfloat16') against the
// same call with the default float32, timed in alternation (bench/encode.mjs timeAlternating), the
// ratio the median 16-bit time over the median float32 time. Target: at most 1.5.
//   encode 8192 x 1024          pe.encode(8192, 1024, { dtype }) (new arrays), and into `out`
//   encoder row (decoding step) enc.encode(1, { offset, dtype }) at dim 1024
//   encode2d 64 x 64, 768       pe.encode2d(64, 64, 768, { preset: 'mae', dtype })
//   rot.cosSin 8192             rot.cosSin(8192, { dtype }) of Llama-2 (head 128), HF and ORT layouts
//   rot.apply 512 x 32 x 128    queries rotated in place: a Uint16Array of 16-bit bits with dtype
//   alibiBias 32 x 512 x 512    pe.alibiBias(32, 512, 512, { dtype }) (causal, [1, 32, 512, 512])
import { timeAlternating } from './encode.mjs';

export async function benchHalf({ pe, log, quick }) {
  const timing = quick ? { budgetMs: 150, minRuns: 3 } : { budgetMs: 500, minRuns: 7 };
  const enc = pe.encoder({ dim: 1024 });
  const rot = pe.rotary({ preset: 'llama-2-7b' });
  // queries [512, 32, 128] rotated in place at every run (the values stay bounded: a rotation)
  const q32 = Float32Array.from({ length: 512 * 32 * 128 }, (_, i) => Math.sin(i));
  const q16 = Uint16Array.from(q32, (v) => 0x3c00 | (Math.abs(v * 1023) & 1023));
  let step = 0;
  const out32 = new Float32Array(8192 * 1024);
  const out16 = new Uint16Array(8192 * 1024);
  const cases = [
    ['encode 8192 x 1024', (dtype) => pe.encode(8192, 1024, { dtype })],
    ['encode 8192 x 1024 into out', (dtype) => pe.encode(8192, 1024, { dtype, out: dtype === 'float32' ? out32 : out16 })],
    ['encoder row, dim 1024', (dtype) => enc.encode(1, { offset: 100 + (step++ % 64), dtype })],
    ['encode2d 64 x 64 x 768', (dtype) => pe.encode2d(64, 64, 768, { preset: 'mae', dtype })],
    ['rot.cosSin 8192, Llama-2', (dtype) => rot.cosSin(8192, { dtype })],
    ["rot.cosSin 8192, ORT cache", (dtype) => rot.cosSin(8192, { dtype, cache: 'ort' })],
    ['rot.apply 512 x 32 x 128', (dtype) => rot.apply(dtype === 'float32' ? q32 : q16, { heads: 32, offset: 9, dtype })],
    ['alibiBias 32 x 512 x 512', (dtype) => pe.alibiBias(32, 512, 512, { dtype })],
  ];
  const rows = [];
  const targets = [];
  log('call                        float32 ms  float16 ms  bfloat16 ms  f16/f32  bf16/f32');
  try {
    for (const [name, call] of cases) {
      const [f32, f16, bf16] = await timeAlternating(
        ['float32', 'float16', 'bfloat16'].map((dtype) => () => call(dtype)),
        timing,
      );
      const row = { name, float32: f32, float16: f16, bfloat16: bf16, f16Ratio: f16 / f32, bf16Ratio: bf16 / f32 };
      rows.push(row);
      const fmt = (x) => (x < 0.1 ? x.toFixed(4) : x.toFixed(2)).padStart(10);
      log(`${name.padEnd(26)}${fmt(f32)}  ${fmt(f16)}  ${fmt(bf16)}   ${row.f16Ratio.toFixed(2).padStart(6)}  ${row.bf16Ratio.toFixed(2).padStart(8)}`);
      const worst = Math.max(row.f16Ratio, row.bf16Ratio);
      targets.push({ target: `dtype 16-bit / float32 <= 1.5: ${name}`, value: worst, ok: worst <= 1.5 });
    }
  } finally {
    enc.dispose();
    rot.dispose();
  }
  return { rows, targets };
}
