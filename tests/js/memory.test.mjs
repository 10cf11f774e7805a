// Memory and lifetime: many calls and create/dispose cycles leave the wasm heap where it started;
// a request that cannot fit throws a RangeError and the instance keeps serving smaller ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadPackage } from './helpers.mjs';

const { init } = await loadPackage();

function heap(pe) {
  return pe._module._posenc_heap_in_use();
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
