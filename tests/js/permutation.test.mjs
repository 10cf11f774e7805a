// Permutation equivariance through the package, in the SIMD and baseline builds: without
// a positional encoding, permuting the tokens permutes the encoder layer's output and attention
// (and the tagger model's logits) bit for bit; with the positional encoding it does not.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixtureDir, loadPackage, maxAbsDiff } from './helpers.mjs';

const { init } = await loadPackage();
const fixture = JSON.parse(readFileSync(join(fixtureDir, 'model', 'tagger.json'), 'utf8'));
const taggerBytes = new Uint8Array(readFileSync(join(fixtureDir, 'model', 'tagger.safetensors')));

// A small LCG: values in [-scale, scale), the same every run.
function lcg(seed, count, scale) {
  let state = (seed * 2654435761 + 12345) >>> 0;
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = (((state >>> 8) - 8388608) / 8388608) * scale;
  }
  return out;
}

function permutation(n, seed) {
  const p = Array.from({ length: n }, (_, i) => i);
  let state = (seed * 2654435761 + 1) >>> 0;
  for (let i = n - 1; i > 0; i--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const j = (state >>> 8) % (i + 1);
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

function layerWeights(seed, d, ff) {
  const w = (i, rows, cols) => lcg(seed * 100 + i, rows * cols, 1 / Math.sqrt(cols));
  const b = (i, n) => lcg(seed * 100 + i, n, 0.125);
  return {
    'self_attn.in_proj_weight': w(0, 3 * d, d), 'self_attn.in_proj_bias': b(1, 3 * d),
    'self_attn.out_proj.weight': w(2, d, d), 'self_attn.out_proj.bias': b(3, d),
    'linear1.weight': w(4, ff, d), 'linear1.bias': b(5, ff),
    'linear2.weight': w(6, d, ff), 'linear2.bias': b(7, d),
    'norm1.weight': b(8, d).map((v) => 1 + v), 'norm1.bias': b(9, d),
    'norm2.weight': b(10, d).map((v) => 1 + v), 'norm2.bias': b(11, d),
  };
}

/** Rows of `rows` (width values each) in the order perm: row i of the result is row perm[i]. */
function permuteRows(rows, perm, width) {
  const out = new rows.constructor(rows.length);
  perm.forEach((from, i) => out.set(rows.subarray(from * width, (from + 1) * width), i * width));
  return out;
}

/** heads x L x L probabilities with both axes permuted. */
function permuteAttention(probs, heads, perm) {
  const l = perm.length;
  const out = new Float32Array(probs.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < l; i++) {
      for (let j = 0; j < l; j++) out[(h * l + i) * l + j] = probs[(h * l + perm[i]) * l + perm[j]];
    }
  }
  return out;
}

/** Largest |row sum - 1| of attention probabilities (rows of `length`): the checks are not vacuous. */
function rowSumError(probs, length) {
  let worst = 0;
  for (let r = 0; r < probs.length; r += length) {
    let sum = 0;
    for (let j = 0; j < length; j++) sum += probs[r + j];
    worst = Math.max(worst, Math.abs(sum - 1));
  }
  return worst;
}

/** The number of entries whose bits differ (0: bit-for-bit equal; -0 and +0 differ). */
function bitMismatches(a, b) {
  assert.equal(a.length, b.length);
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let n = 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) n++;
  return n;
}

// dModel not a multiple of 4, odd L, both norms and activations; `repeat` copies some rows (the
// same word twice).
const CASES = [
  { dModel: 6, heads: 2, ffDim: 10, normFirst: false, activation: 'relu', length: 7, repeat: false },
  { dModel: 6, heads: 3, ffDim: 12, normFirst: true, activation: 'gelu', length: 9, repeat: true },
  { dModel: 30, heads: 3, ffDim: 50, normFirst: false, activation: 'gelu', length: 13, repeat: false },
  { dModel: 30, heads: 5, ffDim: 40, normFirst: true, activation: 'relu', length: 11, repeat: true },
  { dModel: 10, heads: 2, ffDim: 18, normFirst: false, activation: 'relu', length: 33, repeat: true },
];

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'baseline';

  test(`encoder layer (${build}) without PE: permuted tokens give bit-for-bit permuted output and attention`, async () => {
    const pe = await init({ simd });
    let seed = 60;
    for (const c of CASES) {
      const { length, repeat, ...config } = c;
      const d = config.dModel;
      for (const padded of [false, true]) {
        seed++;
        const layer = pe.encoderLayer({ config, weights: layerWeights(seed, d, config.ffDim) });
        try {
          const x = lcg(seed * 7 + 1, length * d, 1);
          if (repeat) {
            x.copyWithin(1 * d, 0, d);
            x.copyWithin(4 * d, 0, d);
            x.copyWithin(3 * d, 2 * d, 3 * d);
          }
          const mask = padded ? Uint8Array.from({ length }, (_, j) => (j % 3 === 1 ? 1 : 0)) : undefined;
          const out = layer.forward(x, { keyPaddingMask: mask });
          const attention = layer.attention();
          assert.ok(rowSumError(attention, length) < 1e-5, 'attention rows sum to 1');
          for (let s = 1; s <= 4; s++) {
            const perm = permutation(length, seed * 31 + s);
            const options = { keyPaddingMask: mask && permuteRows(mask, perm, 1) };
            const moved = layer.forward(permuteRows(x, perm, d), options);
            const what = `d=${d} L=${length} ${config.normFirst ? 'pre' : 'post'}-${config.activation}${padded ? ' padded' : ''} permutation ${s}`;
            const expected = permuteRows(out, perm, d);
            assert.equal(bitMismatches(moved, expected), 0, `${what}: output, max |diff| ${maxAbsDiff(moved, expected)}`);
            assert.equal(bitMismatches(layer.attention(), permuteAttention(attention, config.heads, perm)), 0, `${what}: attention`);
          }
        } finally {
          layer.dispose();
        }
      }
    }
  });

  test(`encoder layer (${build}) with pe.encode added to the input: permuted tokens do not permute the output`, async () => {
    const pe = await init({ simd });
    for (const c of CASES) {
      const { length, repeat, ...config } = c;
      const d = config.dModel;
      const layer = pe.encoderLayer({ config, weights: layerWeights(5, d, config.ffDim) });
      try {
        const emb = lcg(9, length * d, 1);
        const table = pe.encode(length, d);
        const withPe = (e) => e.map((v, i) => v + table[i]);
        const out = layer.forward(withPe(emb));
        const attention = layer.attention();
        const perm = permutation(length, 3);
        const moved = layer.forward(withPe(permuteRows(emb, perm, d)));
        assert.ok(maxAbsDiff(moved, permuteRows(out, perm, d)) > 1e-2, `d=${d}: output`);
        assert.ok(maxAbsDiff(layer.attention(), permuteAttention(attention, config.heads, perm)) > 1e-3, `d=${d}: attention`);
      } finally {
        layer.dispose();
      }
    }
  });

  test(`tagger model (${build}): without PE "the dog bit the man" and "the man bit the dog" swap exactly; with PE they do not`, async () => {
    const pe = await init({ simd });
    const model = pe.loadModel(taggerBytes);
    try {
      const k = model.config.numClasses;
      const id = (w) => {
        const i = model.vocab.indexOf(w);
        assert.ok(i >= 0, w);
        return i;
      };
      const s1 = ['the', 'dog', 'bit', 'the', 'man'].map(id);
      const swap = [0, 4, 2, 3, 1];
      const s2 = swap.map((i) => s1[i]); // the man bit the dog
      const a = model.forward(s1, { pe: false });
      const attA = model.attention();
      assert.ok(rowSumError(attA, 5) < 1e-5, 'attention rows sum to 1');
      const b = model.forward(s2, { pe: false });
      const attB = model.attention();
      assert.equal(bitMismatches(b, permuteRows(a, swap, k)), 0, `logits, max |diff| ${maxAbsDiff(b, permuteRows(a, swap, k))}`);
      assert.equal(bitMismatches(b.subarray(4 * k, 5 * k), a.subarray(1 * k, 2 * k)), 0, 'the dog');
      assert.equal(bitMismatches(b.subarray(1 * k, 2 * k), a.subarray(4 * k, 5 * k)), 0, 'the man');
      // Both layers' attention: [numLayers x heads x L x L], each layer's block permuted.
      const per = model.config.heads * 25;
      for (let layer = 0; layer < model.config.numLayers; layer++) {
        const block = attA.subarray(layer * per, (layer + 1) * per);
        assert.equal(bitMismatches(attB.subarray(layer * per, (layer + 1) * per), permuteAttention(block, model.config.heads, swap)), 0, `attention of layer ${layer}`);
      }
      // Every held-out sentence under a random order.
      fixture.cases.forEach((c, n) => {
        const perm = permutation(c.tokens.length, n + 1);
        const base = model.forward(c.tokens, { pe: false });
        const moved = model.forward(perm.map((i) => c.tokens[i]), { pe: false });
        assert.equal(bitMismatches(moved, permuteRows(base, perm, k)), 0, `sentence ${n} (${c.words.join(' ')})`);
      });
      // With PE the roles follow the positions: the dog acts in s1 and is acted upon in s2.
      const pa = model.forward(s1, { pe: true });
      const pb = model.forward(s2, { pe: true });
      assert.ok(maxAbsDiff(pb, permuteRows(pa, swap, k)) > 1, 'with PE the outputs are not just swapped');
      const tag = (logits, row) => {
        const r = Array.from(logits.subarray(row * k, (row + 1) * k));
        return model.labels[r.indexOf(Math.max(...r))];
      };
      assert.deepEqual([tag(pa, 1), tag(pa, 4), tag(pb, 1), tag(pb, 4)], ['acts', 'acted-upon', 'acts', 'acted-upon']);
    } finally {
      model.dispose();
    }
  });
}
