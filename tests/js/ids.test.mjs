// Integer ids and tensors where posenc takes positions, masks, token ids and the layer's input
// (issue 25): BigInt64Array / BigUint64Array / Int32Array / Uint32Array / Arrays of BigInts and
// tensors { data, dims } (ort.Tensor, transformers.js' Tensor; dims [n] or [1, n]) give exactly
// what the plain Array gives; values outside the allowed range (a BigInt too) are RangeErrors,
// never wrapped; a tensor on a GPU is a TypeError read before its data.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fixtureDir, layerState, loadPackage } from './helpers.mjs';

const { init } = await loadPackage();
const tensor = (data, dims, extra = {}) => ({ data, dims, type: 'int64', location: 'cpu', ...extra });
const gpu = (data, dims) => ({
  dims,
  location: 'gpu-buffer',
  get data() {
    throw new Error('data read');
  },
});

/** The forms a list of small non-negative integers can take. */
function forms(list) {
  return [
    ['Int32Array', Int32Array.from(list)],
    ['Uint32Array', Uint32Array.from(list)],
    ['BigInt64Array', BigInt64Array.from(list, BigInt)],
    ['BigUint64Array', BigUint64Array.from(list, BigInt)],
    ['Array of BigInts', list.map(BigInt)],
    ['tensor [n]', tensor(BigInt64Array.from(list, BigInt), [list.length])],
    ['tensor [1, n]', tensor(Int32Array.from(list), [1, list.length])],
  ];
}

for (const simd of [true, false]) {
  describe(simd ? 'SIMD build' : 'baseline build', async () => {
    const pe = await init({ simd });
    const positions = [0, 7, 3, 1000, 65535];

    test('encode, addTo, concat and an encoder take positions and padding masks in every form', () => {
      const want = pe.encode(5, 16, { positions });
      for (const [name, p] of forms(positions)) {
        assert.deepEqual(pe.encode(5, 16, { positions: p }), want, name);
        const enc = pe.encoder({ dim: 16 });
        assert.deepEqual(enc.encode(5, { positions: p }), want, `encoder ${name}`);
        enc.dispose();
        const x = new Float32Array(5 * 16).fill(1);
        assert.deepEqual(pe.addTo(x, 16, { positions: p }), pe.addTo(new Float32Array(5 * 16).fill(1), 16, { positions }), `addTo ${name}`);
      }
      const mask = [0, 0, 1, 0, 1];
      const masked = pe.encode(5, 16, { preset: 'fairseq', paddingMask: mask });
      for (const [name, m] of forms(mask)) {
        assert.deepEqual(pe.encode(5, 16, { preset: 'fairseq', paddingMask: m }), masked, name);
      }
    });

    test('out-of-range ids are RangeErrors, BigInts compared as BigInts; GPU tensors TypeErrors', () => {
      assert.throws(() => pe.encode(2, 8, { positions: BigInt64Array.of(0n, 2n ** 40n) }), {
        name: 'RangeError',
        message: /positions\[1\] must be a finite number from 0 to 2147483647, got the BigInt 1099511627776n/,
      });
      assert.throws(() => pe.encode(2, 8, { positions: BigInt64Array.of(0n, -1n) }), /positions\[1\].*got the BigInt -1n/);
      assert.throws(() => pe.encode(2, 8, { preset: 'fairseq', paddingMask: BigInt64Array.of(0n, 2n) }), /paddingMask\[1\] must be 0, 1/);
      assert.throws(() => pe.encode(2, 8, { positions: tensor(Int32Array.of(0, 1, 2, 3), [2, 2]) }), {
        name: 'RangeError',
        message: /positions must have dims \[n\] or \[1, n\] \(one sequence\), got \[2,2\]/,
      });
      assert.throws(() => pe.encode(2, 8, { positions: gpu(null, [2]) }), { name: 'TypeError', message: /tensor on the CPU/ });
      assert.throws(() => pe.encode(2, 8, { positions: tensor(Int32Array.of(0, 1, 2), [3]) }), /positions must have 2 entries/);
      assert.equal(pe.encode(1, 8).length, 8); // the instance keeps working
    });

    test('encoderLayer.forward: x as a tensor [L, d] or [1, L, d]; positions and keyPaddingMask in every form', () => {
      const config = { dModel: 8, heads: 2, ffDim: 16, position: 'rotary' };
      const layer = pe.encoderLayer({ config, weights: layerState(3, 8, 16) });
      const x = Float32Array.from({ length: 5 * 8 }, (_, i) => Math.sin(i));
      const want = layer.forward(x, { positions, keyPaddingMask: [0, 0, 0, 1, 0] });
      for (const dims of [[5, 8], [1, 5, 8]]) {
        assert.deepEqual(layer.forward({ data: x, dims, type: 'float32' }, { positions, keyPaddingMask: [0, 0, 0, 1, 0] }), want);
      }
      const masks = forms([0, 0, 0, 1, 0]);
      forms(positions).forEach(([name, p], i) => {
        assert.deepEqual(layer.forward(x, { positions: p, keyPaddingMask: masks[i][1] }), want, name);
      });
      assert.throws(() => layer.forward({ data: x, dims: [5, 4, 2] }), { name: 'RangeError', message: /x must have dims \[L, 8\] or \[1, L, 8\], got \[5,4,2\]/ });
      assert.throws(() => layer.forward({ data: x, dims: [2, 5, 4] }), RangeError);
      assert.throws(() => layer.forward({ data: new Float64Array(40), dims: [5, 8] }), { name: 'TypeError', message: /x must be a Float32Array/ });
      assert.throws(() => layer.forward(gpu(null, [5, 8])), { name: 'TypeError', message: /x must be a tensor on the CPU/ });
      assert.throws(() => layer.forward(x, { positions: BigInt64Array.of(0n, 1n, 2n, 3n, 2n ** 31n) }), /positions\[4\] must be a finite number/);
      assert.deepEqual(layer.forward(x, { positions, keyPaddingMask: [0, 0, 0, 1, 0] }), want);
      layer.dispose();
    });

    test('model.forward: token ids in every form; out-of-vocabulary BigInts are RangeErrors', () => {
      const bytes = new Uint8Array(readFileSync(join(fixtureDir, 'model', 'tagger.safetensors')));
      const model = pe.loadModel(bytes);
      const ids = [1, 2, 3, 4, 1, 0];
      const want = model.forward(ids);
      for (const [name, t] of forms(ids)) assert.deepEqual(model.forward(t), want, name);
      const top = model.config.vocabSize;
      assert.throws(() => model.forward(BigInt64Array.of(1n, BigInt(top))), {
        name: 'RangeError',
        message: new RegExp(`tokens\\[1\\] must be an integer id from 0 to ${top - 1}, got the BigInt ${top}n`),
      });
      assert.throws(() => model.forward(BigInt64Array.of(1n, 2n ** 63n - 1n)), /tokens\[1\] must be an integer id/);
      assert.throws(() => model.forward(BigInt64Array.of(1n, -(2n ** 32n) + 1n)), /tokens\[1\] must be an integer id/);
      assert.throws(() => model.forward(tensor(Int32Array.of(1, 2, 3, 4), [2, 2])), {
        name: 'RangeError',
        message: /tokens must have dims \[L\] or \[1, L\] \(one sequence\), got \[2,2\]/,
      });
      assert.throws(() => model.forward(new Float32Array(2)), { name: 'TypeError', message: /tokens must be an Array or an Int32Array, Uint32Array, BigInt64Array or BigUint64Array/ });
      assert.throws(() => model.forward(gpu(null, [2])), { name: 'TypeError', message: /tokens must be a tensor on the CPU/ });
      assert.deepEqual(model.forward(ids), want);
      model.dispose();
    });
  });
}
