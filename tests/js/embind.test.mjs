// The package really goes through embind: the main entry's module registers the classes
// SinusoidalEncoder, Rotary, Alibi, Sincos2d, TransformerEncoderLayer and Model (and the limits,
// enums and value objects core.js reads; posenc/encoding's registers all but the transformer's,
// tests/js/encoding-entry.test.mjs), the JavaScript API drives exactly those (one bound call per
// one-row call on the hot path; dispose() deletes the embind object), and the .wasm exports no
// plain C functions besides malloc and free.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixtureDir, layerState, loadPackage, root } from './helpers.mjs';

const { init } = await loadPackage();
const dist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const CLASSES = ['SinusoidalEncoder', 'Rotary', 'Alibi', 'Sincos2d', 'TransformerEncoderLayer', 'Model'];

/** Counts calls of the named methods on an embind class's prototype while body() runs. */
function counting(Class, names, body) {
  const counts = Object.fromEntries(names.map((n) => [n, 0]));
  const originals = names.map((n) => Class.prototype[n]);
  names.forEach((n, i) => {
    Class.prototype[n] = function (...args) {
      counts[n]++;
      return originals[i].apply(this, args);
    };
  });
  try {
    body();
  } finally {
    names.forEach((n, i) => (Class.prototype[n] = originals[i]));
  }
  return counts;
}

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'baseline';

  test(`the module registers the embind classes, constants, enums and functions the API reads (${build})`, async () => {
    const M = (await init({ simd }))._module;
    for (const name of CLASSES) {
      assert.equal(typeof M[name], 'function', name);
      assert.equal(typeof M[name].prototype.delete, 'function', `${name} is an embind class`);
    }
    for (const name of [
      'MAX_DIM', 'MAX_POSITION', 'MAX_ELEMENTS', 'MAX_SEQUENCE_LENGTH', 'PRESET_COUNT', 'LAYER_TENSOR_COUNT',
      'ROTARY_MAX_HEAD_DIM', 'ROTARY_MAX_POSITION', 'ALIBI_FIELDS', 'SINCOS2D_FIELDS',
    ]) {
      assert.equal(typeof M[name], 'number', name);
    }
    assert.equal(M.MAX_DIM, 65536);
    assert.equal(M.OddDim['zero-pad'].value, 1);
    assert.equal(M.Activation.gelu.value, 1);
    assert.equal(M.preset(0).name, 'vaswani');
    assert.deepEqual(Object.keys(M).filter((k) => /^_posenc/.test(k)), []);
  });

  test(`the JS API drives the embind classes, one bound call per one-row call (${build})`, async () => {
    const pe = await init({ simd });
    const M = pe._module;
    const out = new Float32Array(64);
    pe.encode(1, 64, { out }); // creates and caches the encoder
    let counts = counting(M.SinusoidalEncoder, ['encode', 'addTo', 'status', 'sines', 'blockRows'], () => {
      pe.encode(1, 64, { offset: 5, out });
      pe.addTo(out, 64, { offset: 6 });
    });
    assert.deepEqual(counts, { encode: 1, addTo: 1, status: 0, sines: 0, blockRows: 0 });

    const enc = pe.encoder({ dim: 64 });
    counts = counting(M.SinusoidalEncoder, ['encode', 'delete'], () => {
      enc.encode(1, { offset: 9, out });
      enc.dispose();
      enc.dispose();
    });
    assert.deepEqual(counts, { encode: 1, delete: 1 });

    const config = { dModel: 8, heads: 2, ffDim: 16 };
    const layer = pe.encoderLayer({ config, weights: layerState(3, 8, 16) });
    counts = counting(M.TransformerEncoderLayer, ['forward', 'delete'], () => {
      layer.forward(new Float32Array(3 * 8));
      layer.dispose();
    });
    assert.deepEqual(counts, { forward: 1, delete: 1 });

    const model = pe.loadModel(readFileSync(join(fixtureDir, 'model', 'tagger.safetensors')));
    counts = counting(M.Model, ['forward', 'delete'], () => {
      model.forward([1, 2, 3]);
      model.dispose();
    });
    assert.deepEqual(counts, { forward: 1, delete: 1 });

    const rot = pe.rotary({ headDim: 8 });
    counts = counting(M.Rotary, ['apply', 'cosSin', 'delete'], () => {
      rot.apply(new Float32Array(2 * 8), { heads: 2, offset: 3 });
      rot.cosSin(4);
      rot.dispose();
    });
    assert.deepEqual(counts, { apply: 1, cosSin: 1, delete: 1 });
    pe.alibiSlopes(4); // makes the instance's Alibi
    counts = counting(M.Alibi, ['slopes', 'biasRows'], () => {
      pe.alibiSlopes(8);
      pe.alibiBias(2, 3, 3);
    });
    assert.deepEqual(counts, { slopes: 1, biasRows: 1 });
    counts = counting(M.Sincos2d, ['writeRows', 'delete'], () => pe.encode2d(2, 2, 8));
    assert.deepEqual(counts, { writeRows: 1, delete: 1 });
  });

  test(`the .wasm exports embind's needs and malloc/free, no posenc_* C functions (${build})`, async () => {
    const wasm = readFileSync(join(dist, simd ? 'posenc_simd.wasm' : 'posenc_baseline.wasm'));
    const exports = WebAssembly.Module.exports(new WebAssembly.Module(wasm));
    const functions = exports.filter((e) => e.kind === 'function');
    assert.ok(functions.length <= 5, `exports: ${exports.map((e) => e.name).join(', ')}`);
    assert.ok(!exports.some((e) => /posenc/i.test(e.name)));
    // The glue is embind's (it went through Closure and terser, so its function names are gone;
    // embind's messages stay) and refers to no posenc_* export.
    const glue = readFileSync(join(dist, simd ? 'posenc_simd.mjs' : 'posenc_baseline.mjs'), 'utf8');
    assert.ok(!/_posenc_/.test(glue), 'the glue refers to a posenc_* export');
    assert.match(glue, /registerType registeredInstance requires argPackAdvance/);
    assert.match(glue, /due to unbound types/);
  });
}
