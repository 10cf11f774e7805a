// posenc/encoding: the encodings without the transformer. Same functions, options, errors and
// results, bit for bit, as the main entry; no encoderLayer or loadModel, and its wasm module
// registers no transformer classes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { loadPackage, root } from './helpers.mjs';

const dist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const whole = await loadPackage();
const encoding = await import(pathToFileURL(join(dist, 'encoding-node.js')).href);

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'baseline';

  test(`posenc/encoding gives the main entry's results and errors (${build})`, async () => {
    const a = await encoding.init({ simd });
    const b = await whole.init({ simd });
    assert.equal(a.simd, simd);
    assert.deepEqual(a.presets, b.presets);
    for (const preset of a.presets.map((p) => p.name)) {
      const options = { preset, offset: 7 };
      assert.deepEqual(a.encode(300, 64, options), b.encode(300, 64, options), preset);
      assert.deepEqual(a.encode(3, 64, { preset, paddingMask: [0, 1, 0] }), b.encode(3, 64, { preset, paddingMask: [0, 1, 0] }));
    }
    const emb = new Float32Array(5 * 16).fill(0.5);
    assert.deepEqual(a.addTo(emb.slice(), 16, { scale: 4 }), b.addTo(emb.slice(), 16, { scale: 4 }));
    assert.deepEqual(a.concat(emb, 16, 8), b.concat(emb, 16, 8));
    assert.deepEqual(a.shift(3, 8, { form: 'blocks' }), b.shift(3, 8, { form: 'blocks' }));
    const enc = a.encoder({ dim: 8, preset: 'whisper' });
    assert.deepEqual(enc.encode(2, { offset: 1 }), b.encode(2, 8, { preset: 'whisper', offset: 1 }));
    enc.dispose();
    assert.equal(enc.disposed, true);
    // The rotary, ALiBi and 2D families, in both entries.
    const config = {
      rope_theta: 500000,
      hidden_size: 256,
      num_attention_heads: 4,
      rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 64 },
    };
    const [ra, rb] = [a, b].map((pe) => pe.rotary({ config }));
    assert.deepEqual(ra.inverseFrequencies, rb.inverseFrequencies);
    const x = Float32Array.from({ length: 3 * 2 * 64 }, (_, i) => Math.sin(i));
    assert.deepEqual(ra.apply(x.slice(), { heads: 2, offset: 100 }), rb.apply(x.slice(), { heads: 2, offset: 100 }));
    assert.deepEqual(ra.cosSin(5, { positions: [0, 7, 70, 700, 7000] }), rb.cosSin(5, { positions: [0, 7, 70, 700, 7000] }));
    ra.dispose();
    rb.dispose();
    assert.deepEqual(a.alibiSlopes(12), b.alibiSlopes(12));
    assert.deepEqual(a.alibiBias(6, 4, 9, { mode: 'symmetric', offset: 5 }), b.alibiBias(6, 4, 9, { mode: 'symmetric', offset: 5 }));
    assert.deepEqual(a.encode2d(3, 5, 16, { clsToken: true }), b.encode2d(3, 5, 16, { clsToken: true }));
    const calls = [
      (pe) => pe.encode(0, 8),
      (pe) => pe.encode(4, 8, { preset: 'nope' }),
      (pe) => pe.shift(1, 7),
      (pe) => pe.rotary({ headDim: 7 }),
      (pe) => pe.alibiBias(2, 2, 2, { mode: 'future' }),
      (pe) => pe.encode2d(2, 2, 6),
    ];
    for (const call of calls) {
      assert.throws(() => call(a), (e) => {
        assert.throws(() => call(b), { name: e.name, message: e.message });
        return true;
      });
    }
  });

  test(`posenc/encoding has no transformer (${build})`, async () => {
    const pe = await encoding.init({ simd });
    assert.equal(pe.encoderLayer, undefined);
    assert.equal(pe.loadModel, undefined);
    assert.equal(pe._module.TransformerEncoderLayer, undefined);
    assert.equal(pe._module.Model, undefined);
    assert.equal(typeof pe._module.SinusoidalEncoder, 'function');
    assert.equal(encoding.simdSupported(), whole.simdSupported());
  });
}
