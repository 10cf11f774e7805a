// Memory and lifetime: many calls and create/dispose cycles leave the wasm heap where it started;
// a request that cannot fit throws a RangeError and the instance keeps serving smaller ones.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixtureDir, layerState, lcgValues, loadPackage } from './helpers.mjs';

const { init } = await loadPackage();

function heap(pe) {
  return pe._module.heapInUse();
}

test('100,000 encode/addTo calls leave the wasm heap where it started', async () => {
  const pe = await init();
  const out = new Float32Array(4 * 64);
  const emb = new Float32Array(4 * 64);
  pe.encode(4, 64, { out }); // first call allocates the instance's scratch region
  pe.addTo(emb, 64);
  pe.encode(4, 64, { positions: [1, 2, 3, 4], out });
  pe.encode(4, 64, { paddingMask: [0, 1, 0, 0], out });
  const before = heap(pe);
  for (let i = 0; i < 25000; i++) {
    pe.encode(4, 64, { offset: i, out });
    pe.addTo(emb, 64, { offset: i });
    pe.encode(4, 64, { positions: [i, i + 1, i + 2, i + 3], out });
    pe.encode(4, 64, { paddingMask: [0, 1, 0, 0], offset: i, out });
  }
  assert.equal(heap(pe), before);
});

test('10,000 encoder create/dispose cycles leave the wasm heap where it started', async () => {
  const pe = await init();
  pe.encode(2, 71); // the instance's scratch region grows to the largest chunk it has served
  const before = heap(pe);
  for (let i = 0; i < 10000; i++) {
    const enc = pe.encoder({ dim: 8 + (i % 64), preset: i % 2 ? 'vaswani' : 'tensor2tensor' });
    enc.encode(2, { offset: i });
    enc.dispose();
  }
  assert.equal(heap(pe), before);
});

test('errors do not leak or poison the instance', async () => {
  const pe = await init();
  const good = pe.encode(3, 8);
  const before = heap(pe);
  for (let i = 0; i < 1000; i++) {
    assert.throws(() => pe.encode(3, 8, { positions: [0, NaN, 1] }), RangeError);
    assert.throws(() => pe.encoder({ dim: 7, preset: 'whisper' }), RangeError);
  }
  assert.equal(heap(pe), before);
  assert.deepEqual(pe.encode(3, 8), good);
});

test('a request that cannot fit in memory throws RangeError; smaller ones still work', async () => {
  const pe = await init();
  // A 40000 x 40000 shift matrix is 6.4 GB: more than wasm32 memory can hold.
  assert.throws(() => pe.shift(1, 40000), RangeError);
  assert.throws(() => pe.shift(1, 23200), RangeError); // 2.15 GB, just over
  assert.equal(pe.shift(1, 2).length, 4);
  assert.deepEqual(pe.encode(2, 4), (await init()).encode(2, 4));
});

// The layer API: encoder layers and models own wasm memory until dispose().

const taggerBytes = new Uint8Array(readFileSync(join(fixtureDir, 'model', 'tagger.safetensors')));
const layerWeights = layerState(4, 8, 16);
const layerConfig = { dModel: 8, heads: 2, ffDim: 16 };

test('10,000 encoder layer create/forward/dispose cycles leave the wasm heap where it started', async () => {
  const pe = await init();
  const x = lcgValues(1, 3 * 8, 1);
  pe.encoderLayer({ config: layerConfig, weights: layerWeights }).dispose(); // embind's first-use setup
  const before = heap(pe);
  let first;
  for (let i = 0; i < 10000; i++) {
    const layer = pe.encoderLayer({ config: layerConfig, weights: layerWeights });
    const y = layer.forward(x, { causal: i % 2 === 1 });
    if (i === 0) first = y;
    layer.dispose();
  }
  assert.equal(heap(pe), before);
  const layer = pe.encoderLayer({ config: layerConfig, weights: layerWeights });
  assert.deepEqual(layer.forward(x), first);
  layer.dispose();
});

test('10,000 loadModel (the tagger) / dispose cycles, every 10th with a forward, leave the wasm heap where it started', async () => {
  const pe = await init();
  pe.loadModel(taggerBytes).dispose();
  const before = heap(pe);
  let first;
  for (let i = 0; i < 10000; i++) {
    const model = pe.loadModel(taggerBytes);
    if (i % 10 === 0) {
      const logits = model.forward([1, 2, 3]);
      if (i === 0) first = logits;
    }
    model.dispose();
  }
  assert.equal(heap(pe), before);
  const model = pe.loadModel(taggerBytes);
  assert.deepEqual(model.forward([1, 2, 3]), first);
  model.dispose();
});

test('1,000 failed loads and failed forwards leave the wasm heap where it started', async () => {
  const pe = await init();
  const model = pe.loadModel(taggerBytes);
  const good = model.forward([1, 2, 3]);
  // A layer whose attention for L = 2048 (256 heads x 2048 x 2048 floats) cannot fit: the
  // forward fails inside the core, after the JS layer has allocated x and out.
  const wide = pe.encoderLayer({ config: { dModel: 256, heads: 256, ffDim: 4 }, weights: layerState(7, 256, 4) });
  const small = lcgValues(2, 2 * 256, 1);
  const wideGood = wide.forward(small);
  const tooLong = new Float32Array(2048 * 256);
  const truncated = taggerBytes.subarray(0, 3000);
  const nan = new Uint8Array(taggerBytes);
  nan.set([0x00, 0x7e], nan.length - 2); // head.bias[2] (F16) = NaN
  const badLayer = { config: layerConfig, weights: { ...layerWeights, 'norm1.bias': new Float32Array(8).fill(NaN) } };
  const fail = () => {
    assert.throws(() => pe.loadModel(truncated), RangeError);
    assert.throws(() => pe.loadModel(nan), /head\.bias\[2\]: weight is NaN/);
    assert.throws(() => pe.loadModel('x'), TypeError);
    assert.throws(() => model.forward([1, 999]), RangeError);
    assert.throws(() => model.forward([1, 2], { keyPaddingMask: [0, 3] }), RangeError);
    assert.throws(() => wide.forward(tooLong), /length: not enough memory/);
    assert.throws(() => pe.encoderLayer(badLayer), /norm1\.bias\[0\]: weight is NaN/);
  };
  // A failed forward frees the layer's workspace; the next good one sizes it again. Repeat that
  // cycle until the heap stops moving: the wasm memory grows to hold tooLong, and emmalloc's
  // layout settles (embind's string arguments are short-lived allocations, and where the
  // re-sized workspace lands depends on the module's static layout: 8 bytes either way in the
  // first rounds). A leak would never settle; 1,000 more failures must then move nothing.
  const cycle = () => {
    for (let i = 0; i < 10; i++) fail(); // measured: after three in a row the layout stops moving
    assert.deepEqual(wide.forward(small), wideGood);
  };
  let settled = -1;
  for (let round = 0; heap(pe) !== settled; round++) {
    assert.ok(round < 6, `the heap keeps moving after failed calls: ${settled} -> ${heap(pe)}`);
    settled = heap(pe);
    cycle();
  }
  const before = heap(pe);
  for (let i = 0; i < 1000; i++) fail();
  assert.deepEqual(wide.forward(small), wideGood);
  assert.equal(heap(pe), before);
  assert.deepEqual(model.forward([1, 2, 3]), good);
  model.dispose();
  wide.dispose();
});

test('layers and models: use after dispose throws, dispose twice is harmless', async () => {
  const pe = await init();
  const before = heap(pe);
  const layer = pe.encoderLayer({ config: layerConfig, weights: layerWeights });
  const model = pe.loadModel(taggerBytes);
  model.forward([1, 2]);
  layer.dispose();
  model.dispose();
  assert.equal(heap(pe), before);
  assert.throws(() => layer.forward(new Float32Array(8)), /encoderLayer\.forward: this encoderLayer was disposed/);
  assert.throws(() => layer.attention(), /disposed/);
  assert.throws(() => model.forward([1, 2]), /model\.forward: this model was disposed/);
  assert.throws(() => model.attention(0), /model\.attention: this model was disposed/);
  layer.dispose();
  model.dispose();
  if (typeof Symbol.dispose === 'symbol') {
    model[Symbol.dispose]();
    layer[Symbol.dispose]();
  }
  assert.equal(heap(pe), before);
  assert.equal(model.config.vocabSize, 30); // plain data stays readable
});

test('a call that grows the scratch region for wide rows gives it back when it returns', async () => {
  const pe = await init();
  pe.encode(4, 64); // the usual scratch region
  pe.encode(1, 2048); // the cached encoder shift uses below
  pe.alibiBias(1, 2, 4); // the cached slopes of one head
  const before = heap(pe);
  pe.shift(1, 2048); // a 16 MB matrix through the scratch region
  pe.alibiBias(1, 2, 1 << 20); // rows of 4 MB
  const rot = pe.rotary({ headDim: 128 });
  rot.apply(new Float32Array(2 * 4096 * 128), { heads: 4096 }); // rows of 2 MB, one per chunk
  rot.dispose();
  // (at most: the region the ordinary calls had made is gone too, until the next call)
  assert.ok(heap(pe) <= before, `${heap(pe)} bytes in use after, ${before} before`);
  // and the next ordinary call still works, with the same bits as before
  assert.deepEqual(pe.encode(4, 64), (await init()).encode(4, 64));
});

test('a call from inside another call of the same instance throws, and neither is left half done', async () => {
  const pe = await init();
  const fresh = await init();
  const enc = pe.encoder({ dim: 16 });
  const nested = {
    get offset() {
      enc.dispose();
      return 0;
    },
  };
  assert.throws(() => enc.encode(3, nested), { name: 'Error', message: /posenc\.encoder\.dispose: called while another call/ });
  assert.equal(enc.disposed, false);
  assert.deepEqual(enc.encode(3, { offset: 7 }), fresh.encode(3, 16, { offset: 7 }));
  // The same instance's free functions, and another instance, from a getter.
  assert.throws(() => pe.encode(2, 8, { get offset() { return pe.alibiSlopes(4)[0]; } }), /posenc\.alibiSlopes: called while/);
  assert.deepEqual(pe.encode(2, 8, { get offset() { return fresh.alibiSlopes(4)[0]; } }), fresh.encode(2, 8, { offset: 0.25 }));
  enc.dispose();
});

test('typed arrays are used through their built-in length, set and subarray', async () => {
  const pe = await init();
  const fresh = await init();
  class Lying extends Float32Array {
    get length() {
      return 8;
    }
    set() {
      throw new Error('not called');
    }
  }
  const x = new Lying(64 * 32);
  pe.addTo(x, 64);
  assert.deepEqual(new Float32Array(x.buffer), fresh.encode(32, 64));
  const y = new Float32Array(16 * 2);
  Object.defineProperty(y, 'length', { value: 1 << 20 });
  const rot = pe.rotary({ headDim: 16 });
  assert.equal(rot.apply(y, { heads: 2 }), y);
  rot.dispose();
  assert.deepEqual(pe.encode(4, 64), fresh.encode(4, 64));
});

test('the encoders pe.encode caches are bounded by their columns, not only by their count', async () => {
  const pe = await init();
  pe.encode(1, 8);
  const before = heap(pe);
  // 16 specs of dim 65536: without the column budget the cache held about 60 MB.
  for (let b = 0; b < 16; b++) pe.encode(1, 65536, { base: 100 + b });
  const grown = heap(pe) - before;
  assert.ok(grown < 12e6, `the cache holds ${grown} bytes`);
  assert.deepEqual(pe.encode(2, 16, { base: 100 }), (await init()).encode(2, 16, { base: 100 }));
});
