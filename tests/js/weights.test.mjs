// Bad weights and bad input to the layer API, in the SIMD and the baseline build: every
// class of corrupt .safetensors file, bad encoderLayer() options and bad forward arguments gets a
// TypeError or RangeError naming the tensor, key or argument; after each one the same instance
// must still load and run models correctly (the tagger against PyTorch's logits, a small model
// against its logits from before the errors, a layer against PyTorch's output).
//
// The bad files are made from a small writer of valid ones (safetensors() below) with one
// targeted change each, not committed as binary junk.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fixtureDir, layerState, lcgValues, loadPackage, maxAbsDiff } from './helpers.mjs';

const { init } = await loadPackage();
const taggerBytes = new Uint8Array(readFileSync(join(fixtureDir, 'model', 'tagger.safetensors')));
const taggerCase = JSON.parse(readFileSync(join(fixtureDir, 'model', 'tagger.json'), 'utf8')).cases[0];
const layerFixture = JSON.parse(readFileSync(join(fixtureDir, 'layer', 'post-relu-d6-pad.json'), 'utf8'));

// ---------------------------------------------------------------------------------------------
// A writer of valid safetensors files.

/** IEEE half bits of v (exact for the values used here: multiples of 2^-7 below 2^15, inf, NaN). */
function toHalf(v) {
  if (Number.isNaN(v)) return 0x7e00;
  if (!Number.isFinite(v)) return v > 0 ? 0x7c00 : 0xfc00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a === 0) return sign;
  const e = Math.floor(Math.log2(a));
  return sign | ((e + 15) << 10) | Math.round((a / 2 ** e - 1) * 1024);
}

/** bfloat16 bits of v: the top half of its float32 bits (exact for multiples of 2^-7 below 2). */
function toBf16(v) {
  return new Uint16Array(new Float32Array([v]).buffer)[1];
}

function tensorBytes(dtype, values) {
  if (dtype === 'F32') return new Uint8Array(new Float32Array(values).buffer);
  const bits = Uint16Array.from(values, dtype === 'F16' ? toHalf : toBf16);
  return new Uint8Array(bits.buffer);
}

/** The 8-byte little-endian header length (declared, by default the real one), header, data. */
function frame(headerBytes, data, declared = headerBytes.length) {
  const out = new Uint8Array(8 + headerBytes.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(declared), true);
  out.set(headerBytes, 8);
  out.set(data, 8 + headerBytes.length);
  return out;
}

/**
 * A .safetensors file of tensors ({ name, dtype, shape, values }) laid out contiguously, with
 * metadata; edit(header) may change the header object before it is written, and text(json) the
 * header text.
 */
function safetensors(tensors, metadata, { edit, text } = {}) {
  const header = {};
  const chunks = [];
  let offset = 0;
  for (const t of tensors) {
    const raw = tensorBytes(t.dtype, t.values);
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + raw.length] };
    chunks.push(raw);
    offset += raw.length;
  }
  if (metadata) header.__metadata__ = metadata;
  edit?.(header);
  let json = JSON.stringify(header);
  if (text) json = text(json);
  const data = new Uint8Array(offset);
  let at = 0;
  for (const c of chunks) {
    data.set(c, at);
    at += c.length;
  }
  return frame(new TextEncoder().encode(json), data);
}

const round7 = (v) => Math.round(v * 128) / 128; // exact in F16 and BF16 too

/** A small model: d 4, 2 heads, ff 8, one layer, vocabulary 5, 2 classes. */
function smallModel(dtype = 'F32') {
  const t = (name, shape, values) => ({ name, dtype, shape, values: Array.from(values, round7) });
  const shapes = {
    'self_attn.in_proj_weight': [12, 4], 'self_attn.in_proj_bias': [12], 'self_attn.out_proj.weight': [4, 4],
    'self_attn.out_proj.bias': [4], 'linear1.weight': [8, 4], 'linear1.bias': [8], 'linear2.weight': [4, 8],
    'linear2.bias': [4], 'norm1.weight': [4], 'norm1.bias': [4], 'norm2.weight': [4], 'norm2.bias': [4],
  };
  const layer = layerState(2, 4, 8);
  return {
    tensors: [
      t('embedding.weight', [5, 4], lcgValues(1, 20, 1)),
      ...Object.entries(shapes).map(([name, shape]) => t(`layers.0.${name}`, shape, layer[name])),
      t('head.weight', [2, 4], lcgValues(3, 8, 0.5)),
      t('head.bias', [2], [0.25, -0.25]),
    ],
    metadata: { heads: '2', num_layers: '1', positional_encoding: 'vaswani' },
  };
}

/** The small model's file with one change: to its tensors, its metadata or its header. */
function smallFile({ dtype = 'F32', tensors, metadata, edit, text } = {}) {
  const m = smallModel(dtype);
  tensors?.(m.tensors);
  metadata?.(m.metadata);
  return safetensors(m.tensors, m.metadata, { edit, text });
}

const TOKENS = [0, 3, 1, 4];

// ---------------------------------------------------------------------------------------------

function throwsNamed(call, ErrorType, pattern) {
  assert.throws(call, (err) => {
    assert.ok(err instanceof ErrorType, `expected a ${ErrorType.name}, got ${err?.constructor?.name}: ${err?.message}`);
    assert.match(err.message, pattern);
    return true;
  });
}

for (const simd of [true, false]) {
  const label = simd ? 'SIMD' : 'baseline';
  const pe = await init({ simd });
  assert.equal(pe.simd, simd);

  // Loaded before any error and kept: they must keep giving the right results.
  const tagger = pe.loadModel(taggerBytes);
  const smallBytes = smallFile();
  const small = pe.loadModel(smallBytes);
  const smallLogits = small.forward(TOKENS);
  small.dispose();
  const layerConfig = layerFixture.config;
  const layerWeights = layerState(layerFixture.seed, layerConfig.dModel, layerConfig.ffDim);
  const layerX = lcgValues(layerFixture.seed * 100 + 99, layerFixture.length * layerConfig.dModel, 1);
  const layerMask = layerFixture.keyPaddingMask;
  const layer = pe.encoderLayer({ config: layerConfig, weights: layerWeights });

  /** The instance still works: the held models and layer, and a fresh load and layer. */
  function stillWorks() {
    assert.ok(maxAbsDiff(tagger.forward(taggerCase.tokens), taggerCase.logitsWithPE) <= 1e-5, 'tagger vs PyTorch');
    const m = pe.loadModel(smallBytes);
    assert.deepEqual(m.forward(TOKENS), smallLogits);
    m.dispose();
    assert.ok(maxAbsDiff(layer.forward(layerX, { keyPaddingMask: layerMask }), layerFixture.expected) <= 1e-5);
    const fresh = pe.encoderLayer({ config: layerConfig, weights: layerWeights });
    assert.ok(maxAbsDiff(fresh.forward(layerX, { keyPaddingMask: layerMask }), layerFixture.expected) <= 1e-5);
    fresh.dispose();
  }

  /** call must throw ErrorType with a message matching pattern; then the instance must work. */
  function refuses(call, ErrorType, pattern) {
    throwsNamed(call, ErrorType, pattern);
    stillWorks();
  }
  const refusesFile = (bytes, pattern) => refuses(() => pe.loadModel(bytes), RangeError, pattern);

  describe(`bad weights (${label})`, () => {
    test('the writer makes valid files: F32, F16 and BF16 give the same logits', () => {
      for (const dtype of ['F16', 'BF16']) {
        const m = pe.loadModel(smallFile({ dtype }));
        assert.deepEqual(m.forward(TOKENS), smallLogits);
        m.dispose();
      }
      stillWorks();
    });

    test('loadModel: truncated files, at every kind of place', () => {
      const headerLength = Number(new DataView(smallBytes.buffer).getBigUint64(0, true));
      const dataStart = 8 + headerLength;
      for (const cut of [0, 1, 7]) refusesFile(smallBytes.subarray(0, cut), /loadModel: header length: .*truncated/);
      for (const cut of [8, 9, dataStart - 1]) refusesFile(smallBytes.subarray(0, cut), /header length: .*truncated/);
      // Inside the data: the last tensor's data_offsets now reach past the end.
      for (const cut of [dataStart, dataStart + 1, dataStart + 100]) {
        refusesFile(smallBytes.subarray(0, cut), /loadModel: [\w.]+: safetensors data_offsets outside the data/);
      }
      refusesFile(smallBytes.subarray(0, smallBytes.length - 1), /loadModel: head\.bias: safetensors data_offsets outside the data/);
    });

    test('loadModel: a header length beyond the file, or too small', () => {
      const body = smallBytes.subarray(8);
      const at = (n) => {
        const copy = new Uint8Array(smallBytes);
        new DataView(copy.buffer).setBigUint64(0, n, true);
        return copy;
      };
      refusesFile(at(BigInt(body.length + 1)), /header length/);
      refusesFile(at(2n ** 40n), /header length/);
      refusesFile(at(2n ** 64n - 1n), /header length/);
      refusesFile(at(1n), /header length/);
      // Shorter than the JSON: the header is cut mid-text and is not valid JSON.
      refusesFile(at(BigInt(body.length - 100)), /loadModel: header: .*invalid JSON/);
      assert.ok(body.length > 100);
    });

    test('loadModel: invalid JSON headers', () => {
      const enc = (s) => frame(new TextEncoder().encode(s), new Uint8Array(0));
      for (const json of ['{"a":[1,}', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":"\u0001"}', '[1,2]', '"x"', '{} {}',
        '{"a":"\\ud800"}', '['.repeat(100) + ']'.repeat(100)]) {
        refusesFile(enc(json), /loadModel: header: .*invalid JSON/);
      }
      // Invalid UTF-8 in a name: bytes, not text.
      const bytes = new Uint8Array([...new TextEncoder().encode('{"a'), 0xc0, 0x80, ...new TextEncoder().encode('":1}')]);
      refusesFile(frame(bytes, new Uint8Array(0)), /header: .*invalid JSON/);
    });

    test('loadModel: header entries that are not {dtype, shape, data_offsets}', () => {
      const entry = (change) => smallFile({ edit: (h) => change(h['head.bias']) });
      refusesFile(entry((e) => delete e.shape), /head\.bias: invalid safetensors header entry/);
      refusesFile(entry((e) => { e.extra = 1; }), /head\.bias: invalid safetensors header entry/);
      refusesFile(entry((e) => { e.shape = [-2]; }), /head\.bias: invalid/);
      refusesFile(entry((e) => { e.shape = [2.5]; }), /head\.bias: invalid/);
      refusesFile(entry((e) => { e.data_offsets = [0]; }), /head\.bias: invalid/);
      refusesFile(entry((e) => { e.data_offsets[0] = -8; }), /head\.bias: invalid/);
      refusesFile(entry((e) => { e.dtype = 'F99'; }), /head\.bias: invalid/);
      refusesFile(smallFile({ edit: (h) => { h['head.bias'] = [1, 2]; } }), /head\.bias: invalid/);
      refusesFile(smallFile({ edit: (h) => { h.__metadata__.heads = 2; } }), /__metadata__\.heads: invalid/);
      // The same key twice (JSON.stringify cannot write it: edit the text).
      refusesFile(smallFile({ text: (j) => j.replace('"head.bias":', '"head.weight":') }), /head\.weight: invalid/);
    });

    test('loadModel: data_offsets out of range, overlapping, or not covering the data', () => {
      const offsets = (name, change) => smallFile({ edit: (h) => change(h[name].data_offsets) });
      // Past the end of the data.
      refusesFile(offsets('head.bias', (o) => { o[0] += 4; o[1] += 4; }), /head\.bias: safetensors data_offsets outside the data/);
      // begin > end.
      refusesFile(offsets('head.bias', (o) => o.reverse()), /head\.bias: safetensors data_offsets/);
      // Overlapping: head.bias moved onto the last 8 bytes of head.weight.
      const overlap = smallFile({ edit: (h) => { h['head.bias'].data_offsets = h['head.weight'].data_offsets.map((x, i) => (i ? x : x - 8)); } });
      refusesFile(overlap, /head\.bias: safetensors data_offsets outside the data, overlapping/);
      // A gap before a tensor: embedding.weight starts 4 bytes in (and everything moves 4 on).
      const gap = smallFile({ edit: (h) => { for (const [k, v] of Object.entries(h)) if (k !== '__metadata__') v.data_offsets = v.data_offsets.map((x) => x + 4); } });
      refusesFile(gap, /head\.bias: safetensors data_offsets outside the data/);
      const gapped = new Uint8Array(gap.length + 4);
      gapped.set(gap);
      refusesFile(gapped, /embedding\.weight: safetensors data has bytes that no tensor's data_offsets cover/);
      // Bytes after the last tensor.
      const longer = new Uint8Array(smallBytes.length + 4);
      longer.set(smallBytes);
      refusesFile(longer, /loadModel: data: safetensors data has bytes that no tensor's data_offsets cover/);
    });

    test('loadModel: unsupported dtypes, and shapes that disagree with the byte range', () => {
      for (const dtype of ['I64', 'F64', 'BOOL', 'I8', 'U16', 'F8_E4M3']) {
        refusesFile(smallFile({ edit: (h) => { h['layers.0.norm1.bias'].dtype = dtype; } }), /layers\.0\.norm1\.bias: unsupported dtype \(F32, F16 and BF16/);
      }
      // 16 bytes of F32 read as F16 would be 8 elements: the shape [4] does not fit them.
      refusesFile(smallFile({ edit: (h) => { h['layers.0.norm1.bias'].dtype = 'F16'; } }), /layers\.0\.norm1\.bias: .*not matching the shape/);
      refusesFile(smallFile({ edit: (h) => { h['embedding.weight'].shape = [5, 5]; } }), /embedding\.weight: .*not matching the shape/);
      refusesFile(smallFile({ edit: (h) => { h['embedding.weight'].shape = [4294967296, 4294967296]; } }), /embedding\.weight: .*not matching the shape/);
    });

    test('loadModel: missing, extra and wrongly shaped tensors', () => {
      const without = (name) => smallFile({ tensors: (ts) => ts.splice(ts.findIndex((t) => t.name === name), 1) });
      refusesFile(without('head.bias'), /loadModel: head\.bias: missing tensor/);
      refusesFile(without('embedding.weight'), /embedding\.weight: missing tensor/);
      refusesFile(without('layers.0.norm2.weight'), /layers\.0\.norm2\.weight: missing tensor/);
      const extra = (name, shape = [1]) => smallFile({ tensors: (ts) => ts.push({ name, dtype: 'F32', shape, values: new Array(shape.reduce((a, b) => a * b, 1)).fill(0) }) });
      refusesFile(extra('layers.0.dropout.weight'), /layers\.0\.dropout\.weight: unknown tensor/);
      refusesFile(extra('layers.1.norm1.weight', [4]), /layers\.1\.norm1\.weight: unknown tensor/);
      refusesFile(extra('pos_embedding'), /pos_embedding: unknown tensor/);
      const reshaped = (name, shape) => smallFile({ tensors: (ts) => { ts.find((t) => t.name === name).shape = shape; } });
      refusesFile(reshaped('layers.0.linear2.weight', [8, 4]), /layers\.0\.linear2\.weight: tensor has the wrong shape/);
      refusesFile(reshaped('layers.0.self_attn.in_proj_bias', [3, 4]), /layers\.0\.self_attn\.in_proj_bias: tensor has the wrong shape/);
      refusesFile(reshaped('head.bias', [1, 2]), /head\.bias: tensor has the wrong shape/);
      refusesFile(reshaped('head.weight', [4, 2]), /head\.weight: tensor has the wrong shape/);
      refusesFile(reshaped('embedding.weight', [20]), /embedding\.weight: tensor has the wrong shape/);
      refusesFile(reshaped('layers.0.linear1.weight', [4, 8]), /layers\.0\.linear1\.weight: tensor has the wrong shape/);
    });

    test('loadModel: bad config metadata names the key', () => {
      const meta = (key, value) => smallFile({ metadata: (m) => { if (value === undefined) delete m[key]; else m[key] = value; } });
      for (const [key, value] of [
        ['heads', '3'], ['heads', '0'], ['heads', 'two'], ['heads', '2.0'], ['heads', undefined],
        ['num_layers', '0'], ['num_layers', '65'], ['num_layers', undefined],
        ['positional_encoding', 'bert'], ['positional_encoding', undefined],
        ['activation', 'tanh'], ['norm_first', '1'], ['layer_norm_eps', '-1e-5'], ['layer_norm_eps', 'tiny'],
        ['embedding_scale', '1e39'], ['embedding_scale', 'NaN'],
      ]) {
        refusesFile(meta(key, value), new RegExp(`loadModel: __metadata__\\.${key}: missing or invalid model metadata`));
      }
      // num_layers 2 with one layer of tensors: the second layer's first tensor is missing.
      refusesFile(meta('num_layers', '2'), /layers\.1\.self_attn\.in_proj_weight: missing tensor/);
      // Optional keys with good values, and keys the model does not know, load.
      const ok = pe.loadModel(smallFile({ metadata: (m) => Object.assign(m, { norm_first: 'false', activation: 'relu', layer_norm_eps: '1e-05', format: 'pt', anything: 'else' }) }));
      assert.deepEqual(ok.forward(TOKENS), smallLogits);
      ok.dispose();
    });

    test('loadModel: NaN and Infinity in weights are refused, naming the element', () => {
      const poisoned = (dtype, name, index, value) => smallFile({ dtype, tensors: (ts) => { ts.find((t) => t.name === name).values[index] = value; } });
      const cases = [
        ['F32', 'embedding.weight', 6, NaN, 'embedding\\.weight\\[1\\]\\[2\\]'],
        ['F16', 'embedding.weight', 0, Infinity, 'embedding\\.weight\\[0\\]\\[0\\]'],
        ['BF16', 'head.weight', 7, -Infinity, 'head\\.weight\\[1\\]\\[3\\]'],
        ['F32', 'head.bias', 1, NaN, 'head\\.bias\\[1\\]'],
        ['F16', 'layers.0.norm1.weight', 3, NaN, 'layers\\.0\\.norm1\\.weight\\[3\\]'],
        ['BF16', 'layers.0.linear1.weight', 9, Infinity, 'layers\\.0\\.linear1\\.weight\\[2\\]\\[1\\]'],
      ];
      for (const [dtype, name, index, value, element] of cases) {
        refusesFile(poisoned(dtype, name, index, value), new RegExp(`loadModel: ${element}: weight is NaN or infinite \\(weights must be finite\\)`));
      }
      // The largest finite values load (what they do to the logits is propagated, not refused).
      const big = pe.loadModel(poisoned('F16', 'head.bias', 0, 65504));
      assert.equal(big.forward(TOKENS).length, 8);
      big.dispose();
    });

    test('loadModel: what bytes may be (Uint8Array, ArrayBuffer) and what not', () => {
      // Accepted: a Uint8Array (a Node Buffer is one), a view at an offset, an ArrayBuffer, a
      // SharedArrayBuffer.
      const shifted = new Uint8Array(smallBytes.length + 3);
      shifted.set(smallBytes, 3);
      const shared = new SharedArrayBuffer(smallBytes.length);
      new Uint8Array(shared).set(smallBytes);
      for (const bytes of [Buffer.from(smallBytes), shifted.subarray(3), smallBytes.slice().buffer, shared, new Uint8Array(shared)]) {
        const m = pe.loadModel(bytes);
        assert.deepEqual(m.forward(TOKENS), smallLogits);
        m.dispose();
      }
      // Refused with a TypeError naming bytes.
      const wrong = [
        'tagger.safetensors', Array.from(smallBytes), new Int8Array(smallBytes.buffer), new Uint8ClampedArray(smallBytes),
        new Float32Array(4), new DataView(smallBytes.buffer), null, undefined, 42, { bytes: smallBytes },
      ];
      for (const bytes of wrong) refuses(() => pe.loadModel(bytes), TypeError, /loadModel: bytes must be a Uint8Array or an ArrayBuffer/);
      const detached = smallBytes.slice();
      structuredClone(detached.buffer, { transfer: [detached.buffer] });
      refuses(() => pe.loadModel(detached), TypeError, /bytes is backed by a detached ArrayBuffer/);
      refuses(() => pe.loadModel(detached.buffer), TypeError, /bytes is a detached ArrayBuffer/);
    });

    test('encoderLayer: missing, extra, wrongly shaped and wrongly typed weights', () => {
      const config = layerConfig;
      const make = (change) => () => {
        const weights = { ...layerWeights };
        change(weights);
        return pe.encoderLayer({ config, weights });
      };
      refuses(make((w) => delete w['norm2.bias']), TypeError, /encoderLayer: weights\["norm2\.bias"\] is missing/);
      refuses(make((w) => { w['norm2.bias'] = undefined; }), TypeError, /weights\["norm2\.bias"\] must be a Float32Array, got undefined/);
      refuses(make((w) => { w['linear3.weight'] = new Float32Array(60); }), TypeError, /weights\["linear3\.weight"\] is not a tensor of nn\.TransformerEncoderLayer/);
      refuses(make((w) => { w.in_proj_weight = w['self_attn.in_proj_weight']; }), TypeError, /weights\["in_proj_weight"\] is not a tensor/);
      refuses(make((w) => { w['linear1.weight'] = new Float32Array(100); }), RangeError, /weights\["linear1\.weight"\] must hold 10 x 6 = 60 floats \(ffDim x dModel\), got 100/);
      refuses(make((w) => { w['self_attn.in_proj_bias'] = new Float32Array(6); }), RangeError, /weights\["self_attn\.in_proj_bias"\] must hold 18 floats \(3 dModel\), got 6/);
      refuses(make((w) => { w['norm1.weight'] = new Float64Array(6); }), TypeError, /weights\["norm1\.weight"\] must be a Float32Array, got a Float64Array/);
      refuses(make((w) => { w['norm1.weight'] = [1, 1, 1, 1, 1, 1]; }), TypeError, /weights\["norm1\.weight"\] must be a Float32Array, got an Array/);
      const detached = layerWeights['norm1.bias'].slice();
      structuredClone(detached.buffer, { transfer: [detached.buffer] });
      refuses(make((w) => { w['norm1.bias'] = detached; }), TypeError, /weights\["norm1\.bias"\] is backed by a detached ArrayBuffer/);
      for (const weights of [null, 'weights', [], new Map(Object.entries(layerWeights)), new Float32Array(6)]) {
        refuses(() => pe.encoderLayer({ config, weights }), TypeError, /encoderLayer: weights must be a plain object of Float32Arrays/);
      }
      refuses(() => pe.encoderLayer({ config }), TypeError, /weights must be/);
    });

    test('encoderLayer: NaN and Infinity in weights are refused, naming the element', () => {
      const poisoned = (name, index, value) => () => {
        const w = layerWeights[name].slice();
        w[index] = value;
        return pe.encoderLayer({ config: layerConfig, weights: { ...layerWeights, [name]: w } });
      };
      refuses(poisoned('norm1.weight', 3, NaN), RangeError, /encoderLayer: weights: norm1\.weight\[3\]: weight is NaN or infinite/);
      refuses(poisoned('self_attn.in_proj_weight', 5 * 6 + 2, Infinity), RangeError, /self_attn\.in_proj_weight\[5\]\[2\]: weight is NaN or infinite/);
      refuses(poisoned('linear2.bias', 0, -Infinity), RangeError, /linear2\.bias\[0\]: weight is NaN/);
    });

    test('encoderLayer: bad config values name the field', () => {
      const withConfig = (change) => () => pe.encoderLayer({ config: { ...layerConfig, ...change }, weights: layerWeights });
      refuses(withConfig({ heads: 4 }), RangeError, /config\.heads must divide config\.dModel \(6 % 4 != 0\)/);
      for (const dModel of [0, -6, 6.5, NaN, Infinity, 8193]) refuses(withConfig({ dModel }), RangeError, /config\.dModel must be an integer from 1 to 8192/);
      for (const heads of [0, -2, 1.5, 257]) refuses(withConfig({ heads }), RangeError, /config\.heads must be an integer from 1 to 256/);
      for (const ffDim of [0, -10, 10.5, 65537]) refuses(withConfig({ ffDim }), RangeError, /config\.ffDim must be an integer from 1 to 65536/);
      refuses(withConfig({ dModel: '6' }), TypeError, /config\.dModel must be an integer number, got the string "6"/);
      refuses(withConfig({ heads: 2n }), TypeError, /config\.heads must be an integer number, got the BigInt 2n/);
      refuses(withConfig({ activation: 'tanh' }), RangeError, /config\.activation must be 'relu' or 'gelu', got the string "tanh"/);
      refuses(withConfig({ activation: 0 }), TypeError, /config\.activation must be 'relu' or 'gelu'/);
      for (const layerNormEps of [-1e-5, NaN, Infinity]) refuses(withConfig({ layerNormEps }), RangeError, /config\.layerNormEps must be a finite number >= 0/);
      refuses(withConfig({ layerNormEps: '1e-5' }), TypeError, /config\.layerNormEps must be a number/);
      refuses(withConfig({ normFirst: 'yes' }), TypeError, /config\.normFirst must be a boolean/);
      refuses(withConfig({ dropout: 0.1 }), TypeError, /encoderLayer: unknown config field 'dropout'/);
      refuses(withConfig({ d_model: 6 }), TypeError, /unknown config field 'd_model'/);
      for (const config of [undefined, null, 6, 'config']) {
        refuses(() => pe.encoderLayer({ config, weights: layerWeights }), TypeError, /encoderLayer: config must be an object/);
      }
      refuses(() => pe.encoderLayer(), TypeError, /encoderLayer: needs \{ config, weights \}/);
      refuses(() => pe.encoderLayer(null), TypeError, /encoderLayer: options must be an object/);
      refuses(() => pe.encoderLayer({ config: layerConfig, weights: layerWeights, dtype: 'f16' }), TypeError, /unknown option 'dtype'/);
    });

    test('encoderLayer.forward: lengths, input types and masks', () => {
      const d = layerConfig.dModel;
      const f = (x, options) => () => layer.forward(x, options);
      refuses(f(new Float32Array(0)), RangeError, /encoderLayer\.forward: x must hold L x 6 floats with L >= 1, got 0/);
      refuses(f(new Float32Array(7)), RangeError, /x must hold L x 6 floats/);
      refuses(f(new Float32Array(8193 * d)), RangeError, /x has 8193 rows \(L\); at most 8192/);
      refuses(f(Array.from(layerX)), TypeError, /x must be a Float32Array/);
      refuses(f(new Float64Array(layerX)), TypeError, /x must be a Float32Array .*got a Float64Array/);
      const detached = layerX.slice();
      structuredClone(detached.buffer, { transfer: [detached.buffer] });
      refuses(f(detached), TypeError, /x is backed by a detached ArrayBuffer/);
      refuses(f(layerX, { keyPaddingMask: [0, 0, 1] }), RangeError, /keyPaddingMask must have 5 entries \(one per token\), got 3/);
      refuses(f(layerX, { keyPaddingMask: [0, 2, 0, 0, 0] }), RangeError, /keyPaddingMask\[1\] must be 0, 1, false or true/);
      refuses(f(layerX, { keyPaddingMask: [0, 0, 0, 'x', 0] }), RangeError, /keyPaddingMask\[3\] must be 0, 1, false or true .*got the string "x"/);
      refuses(f(layerX, { keyPaddingMask: new Uint8Array([0, 0, 0, 0, 255]) }), RangeError, /keyPaddingMask\[4\]/);
      refuses(f(layerX, { keyPaddingMask: new Float32Array([0, 0, 0.5, 0, 0]) }), RangeError, /keyPaddingMask\[2\] must be 0, 1, false or true/);
      refuses(f(layerX, { keyPaddingMask: BigInt64Array.of(0n, 0n, 2n, 0n, 0n) }), RangeError, /keyPaddingMask\[2\] must be 0, 1, false or true/);
      refuses(f(layerX, { keyPaddingMask: '00011' }), TypeError, /keyPaddingMask must be/);
      refuses(f(layerX, { causal: 1 }), TypeError, /causal must be a boolean/);
      refuses(f(layerX, { casual: true }), TypeError, /unknown option 'casual'/);
      // Input values are not checked: NaN in x propagates into the outputs it reaches.
      const nan = layerX.slice();
      nan[0] = NaN;
      assert.ok(layer.forward(nan).some(Number.isNaN));
      stillWorks();
    });

    test('encoderLayer.forward: an L whose attention cannot fit in memory is a RangeError', () => {
      // 256 heads x 8192 x 8192 floats = 64 GB (2^34 floats wrapped to 0 in wasm32 before: the
      // forward wrote out of bounds and trapped, and the instance was unusable afterwards).
      const d = 256;
      const weights = layerState(7, d, 4);
      const wide = pe.encoderLayer({ config: { dModel: d, heads: 256, ffDim: 4 }, weights });
      const x = lcgValues(5, 2 * d, 1);
      const good = wide.forward(x);
      refuses(() => wide.forward(new Float32Array(8192 * d)), RangeError, /encoderLayer\.forward: length: not enough memory/);
      // 2^30 floats: fits in wasm32's size_t, not in its memory.
      refuses(() => wide.forward(new Float32Array(2048 * d)), RangeError, /length: not enough memory/);
      assert.deepEqual(wide.forward(x), good);
      wide.dispose();
    });

    test('model.forward: token ids, lengths and masks', () => {
      const f = (tokens, options) => () => tagger.forward(tokens, options);
      const vocab = tagger.config.vocabSize;
      refuses(f([1, vocab, 2]), RangeError, new RegExp(`model\\.forward: tokens\\[1\\] must be an integer id from 0 to ${vocab - 1}, got ${vocab}`));
      refuses(f([-1, 1]), RangeError, /tokens\[0\] must be an integer id/);
      refuses(f([1, 1.5]), RangeError, /tokens\[1\] must be an integer id .*got 1\.5/);
      refuses(f([1, NaN]), RangeError, /tokens\[1\]/);
      refuses(f([1, 2 ** 31]), RangeError, /tokens\[1\]/);
      refuses(f(Int32Array.of(1, 2, -5)), RangeError, /tokens\[2\]/);
      refuses(f([1, '2']), TypeError, /tokens\[1\] must be an integer token id, got the string "2"/);
      refuses(f([1, null]), TypeError, /tokens\[1\]/);
      refuses(f([]), RangeError, /tokens must hold 1 to 8192 ids, got 0/);
      refuses(f(new Array(8193).fill(1)), RangeError, /tokens must hold 1 to 8192 ids, got 8193/);
      refuses(f(new Float32Array([1, 2])), TypeError, /tokens must be an Array or an Int32Array, Uint32Array, BigInt64Array or BigUint64Array of token ids/);
      refuses(f('1 2 3'), TypeError, /tokens must be/);
      refuses(f([1, 2, 3], { keyPaddingMask: [1, 0] }), RangeError, /keyPaddingMask must have 3 entries/);
      refuses(f([1, 2, 3], { keyPaddingMask: [1, 0, -1] }), RangeError, /keyPaddingMask\[2\]/);
      refuses(f([1, 2, 3], { pe: 'no' }), TypeError, /model\.forward: pe must be a boolean, got the string "no"/);
      refuses(f([1, 2, 3], { positionalEncoding: 0 }), TypeError, /positionalEncoding must be a boolean, got 0/);
      refuses(f([1, 2, 3], { pe: false, positionalEncoding: true }), TypeError, /give positionalEncoding or its alias pe, not both/);
      refuses(f([1, 2, 3], { causal: 'yes' }), TypeError, /causal must be a boolean/);
      refuses(() => tagger.attention(2), RangeError, /model\.attention: layer must be an integer from 0 to 1/);
      refuses(() => tagger.attention('0'), TypeError, /layer must be an integer number/);
    });
  });
}
