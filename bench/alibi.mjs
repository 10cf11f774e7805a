// ALiBi of issue 25, measured side by side in one run (part of `npm run bench`, or
// `node bench/run.mjs --only alibi`, or `node bench/alibi.mjs [--quick]`):
//   [4, 12, 512, 512]   pe.alibiBias(12, 512, 512, { attentionMask, maskValue: -65504 }): the core's
//                       [heads, q, k] block, copied per batch row, masked keys set to maskValue;
//   BLOOM [4 * 32, 1, 2048]  build_alibi_tensor's form, posenc/relative's alibiModelBias({ model:
//                       'bloom', heads: 32, attentionMask }) (tested bit for bit against PyTorch),
//                       for batch 4, heads 32, keys 2048;
// each against
//   plain JS            a port an app writes of the model code, op by op as the tensors go: the
//                       slopes, the [heads, q, k] bias by the formula (or cumsum(mask) - 1, times the
//                       mask), then the batch expansion with masked_fill (or the broadcast product),
//                       each op a pass over a new array;
//   floor               the output's bytes written once into a new array (new Float32Array(n).fill):
//                       the least any function returning a fresh array of that size does.
// Outputs are compared before anything is timed; each row's functions are timed in alternation
// (bench/encode.mjs timeAlternating). Ratios are medians over the floor in the same run.
import { timeAlternating } from './encode.mjs';
import { alibiModelBias } from '../dist/relative.js';

const f32 = Math.fround;

/** Left padding of `pad` keys in row b of `batch` (b * pad / (batch - 1) rounded), 0/1 rows. */
function paddingMask(batch, keys, pad) {
  return Array.from({ length: batch }, (_, b) => {
    const p = Math.round((b * pad) / Math.max(1, batch - 1));
    return Array.from({ length: keys }, (_, j) => (j < p ? 0 : 1));
  });
}

/** The paper's get_slopes in float64 (ofirpress/attention_with_linear_biases). */
function paperSlopes(n) {
  const powerOf2 = (m) => Array.from({ length: m }, (_, i) => 2 ** (-(2 ** -(Math.log2(m) - 3))) * (2 ** (-(2 ** -(Math.log2(m) - 3)))) ** i);
  if (Number.isInteger(Math.log2(n))) return powerOf2(n);
  const p = 2 ** Math.floor(Math.log2(n));
  return [...powerOf2(p), ...paperSlopes(2 * p).filter((_, i) => i % 2 === 0).slice(0, n - p)];
}

/** Plain JS: the causal [heads, q, k] bias, then expanded over the batch and masked_fill. */
function plainPadded(heads, q, k, mask, maskValue) {
  const slopes = paperSlopes(heads);
  const bias = new Float32Array(heads * q * k);
  for (let h = 0, o = 0; h < heads; h++) {
    for (let i = 0; i < q; i++) for (let j = 0; j < k; j++, o++) bias[o] = j <= i ? -(slopes[h] * (i - j)) : -Infinity;
  }
  const out = new Float32Array(mask.length * bias.length);
  for (let b = 0, o = 0; b < mask.length; b++) {
    const row = mask[b];
    for (let x = 0; x < bias.length; x++, o++) {
      const v = bias[x];
      out[o] = row[x % k] === 0 || v === -Infinity ? maskValue : v;
    }
  }
  return out;
}

/** Plain JS port of build_alibi_tensor, op by op. */
function plainBloom(mask, heads) {
  const batch = mask.length;
  const keys = mask[0].length;
  const p = 2 ** Math.floor(Math.log2(heads));
  const base = f32(2 ** -(2 ** -(Math.log2(p) - 3)));
  const slopes = [];
  for (let i = 1; i <= p; i++) slopes.push(f32(base ** i));
  if (p !== heads) {
    const extra = f32(2 ** -(2 ** -(Math.log2(2 * p) - 3)));
    for (let i = 1; i < 1 + 2 * Math.min(p, heads - p); i += 2) slopes.push(f32(extra ** i));
  }
  const cumsum = mask.map((row) => {
    let s = 0;
    return row.map((m) => (s += m));
  });
  const arange = cumsum.map((row, b) => row.map((c, j) => (c - 1) * mask[b][j]));
  const out = new Float32Array(batch * heads * keys);
  for (let b = 0, o = 0; b < batch; b++) for (let h = 0; h < heads; h++) for (let j = 0; j < keys; j++) out[o++] = slopes[h] * arange[b][j];
  return out;
}

function differing(a, b) {
  if (a.length !== b.length) return Infinity;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let n = 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) n++;
  return n;
}

/**
 * @param {object} o
 * @param {object} o.pe  an initialized posenc instance
 * @returns {{ rows: object[], targets: object[] }}
 */
export async function benchAlibi({ pe, log = () => {}, quick = false }) {
  const rows = [];
  const targets = [];
  const timing = quick ? { budgetMs: 150, minRuns: 3, maxRuns: 10 } : { budgetMs: 500, minRuns: 7, maxRuns: 40 };
  const report = (shape, names, ms, floorMs, extra) => {
    for (let i = 0; i < names.length; i++) {
      const row = { shape, method: names[i], ms: ms[i], ratio: ms[i] / floorMs, ...extra };
      rows.push(row);
      log(`${shape.padEnd(30)} ${names[i].padEnd(44)} ${ms[i].toFixed(3).padStart(9)} ms  ${row.ratio.toFixed(2)}x floor`);
    }
  };

  {
    const [batch, heads, q, k] = [4, 12, 512, 512];
    const mask = paddingMask(batch, k, 64);
    const n = batch * heads * q * k;
    const ours = () => pe.alibiBias(heads, q, k, { attentionMask: mask, maskValue: -65504 });
    const plain = () => plainPadded(heads, q, k, mask, -65504);
    const floor = () => new Float32Array(n).fill(-65504);
    const diff = differing(ours(), plain());
    log(`[${batch}, ${heads}, ${q}, ${k}] padded: posenc vs the plain port: ${diff} of ${n} values differ in bits (float64 slopes: the core's exact pow against the paper's expression)`);
    const ms = await timeAlternating([floor, ours, plain], timing);
    report(`[${batch}, ${heads}, ${q}, ${k}] padded`, ['floor (new array, written once)', 'posenc alibiBias + attentionMask', 'plain JS (bias, expand, masked_fill)'], ms, ms[0], { differing: diff });
    targets.push({ target: `alibiBias [${batch}, ${heads}, ${q}, ${k}] with a mask: within 2x of its floor (posenc ms / floor ms)`, value: ms[1] / ms[0], ok: ms[1] / ms[0] <= 2 });
    targets.push({ target: `alibiBias [${batch}, ${heads}, ${q}, ${k}] with a mask: faster than the plain JS port (plain ms / posenc ms)`, value: ms[2] / ms[1], ok: ms[2] > ms[1] });
  }

  {
    const [batch, heads, keys] = [4, 32, quick ? 512 : 2048];
    const mask = paddingMask(batch, keys, 100);
    const flat = Uint8Array.from(mask.flat());
    const n = batch * heads * keys;
    const ours = () => alibiModelBias(keys, { model: 'bloom', heads, attentionMask: flat, batch });
    const plain = () => plainBloom(mask, heads);
    const floor = () => new Float32Array(n).fill(0.5);
    const diff = differing(ours(), plain());
    // The plain port's (cumsum - 1) * mask is -1 * 0 = -0 in JavaScript at left padding, where
    // torch's int64 arithmetic gives 0: equal values, other bits (alibi_models.js writes +0).
    log(`BLOOM [${batch} * ${heads}, 1, ${keys}]: alibiModelBias vs the plain port: ${diff} values differ in bits (the port's -0 at padded keys; torch gives +0)`);
    const ms = await timeAlternating([floor, ours, plain], timing);
    report(`BLOOM [${batch} * ${heads}, 1, ${keys}]`, ['floor (new array, written once)', 'posenc/relative alibiModelBias', 'plain JS (build_alibi_tensor op by op)'], ms, ms[0], { differing: diff });
    targets.push({ target: `BLOOM build_alibi_tensor [${batch} * ${heads}, 1, ${keys}]: faster than the plain JS port (plain ms / ours ms)`, value: ms[2] / ms[1], ok: ms[2] > ms[1] });
  }
  return { rows, targets };
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { init } = await import('../dist/node.js');
  const pe = await init();
  const { targets } = await benchAlibi({ pe, log: console.log, quick: process.argv.includes('--quick') });
  for (const t of targets) console.log(`${t.ok ? 'MET   ' : 'MISSED'} ${t.target} (${typeof t.value === 'number' ? t.value.toPrecision(3) : t.value})`);
}
