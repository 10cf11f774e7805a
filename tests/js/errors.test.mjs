// Bad input gets a TypeError or RangeError naming the argument; the instance keeps working.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadPackage } from './helpers.mjs';

const { init } = await loadPackage();
const pe = await init();
const good = pe.encode(3, 8, { offset: 5 });

function rejects(fn, ErrorType, pattern) {
  assert.throws(fn, (err) => err instanceof ErrorType && pattern.test(err.message), `expected ${ErrorType.name} ${pattern}`);
  // The next valid call is still right.
  assert.deepEqual(pe.encode(3, 8, { offset: 5 }), good);
}

test('wrong types are TypeErrors naming the argument', () => {
  rejects(() => pe.encode('3', 8), TypeError, /length/);
  rejects(() => pe.encode(3, null), TypeError, /dim/);
  rejects(() => pe.encode(3, 8n), TypeError, /dim.*BigInt/);
  rejects(() => pe.encode(3, 8, 'split'), TypeError, /options/);
  rejects(() => pe.encode(3, 8, { layout: 1 }), TypeError, /layout/);
  rejects(() => pe.addTo([1, 2, 3, 4], 4), TypeError, /embeddings.*Float32Array/);
  rejects(() => pe.addTo(new Float64Array(4), 4), TypeError, /embeddings.*Float64Array/);
  rejects(() => pe.encode(3, 8, { out: new Float64Array(24) }), TypeError, /out/);
  rejects(() => pe.encode(3, 8, { positions: 'abc' }), TypeError, /positions/);
  rejects(() => pe.encode(3, 8, { positions: [1, '2', 3] }), TypeError, /positions\[1\]/);
  rejects(() => pe.encode(3, 8, { positions: BigInt64Array.of(0n, 1n, 2n ** 40n) }), RangeError, /positions\[2\]/);
  rejects(() => pe.encoder(8), TypeError, /options/);
  rejects(() => pe.encoder({}), TypeError, /dim/);
});

test('bad values and sizes are RangeErrors naming the argument', () => {
  for (const length of [0, -1, 1.5, NaN, Infinity]) rejects(() => pe.encode(length, 8), RangeError, /length/);
  for (const dim of [0, -2, 2.5, NaN, 65537]) rejects(() => pe.encode(3, dim), RangeError, /dim/);
  rejects(() => pe.encode(2 ** 20, 2 ** 12), RangeError, /length \* dim/);
  rejects(() => pe.encode(3, 8, { base: 1 }), RangeError, /base/);
  rejects(() => pe.encode(3, 8, { base: -5 }), RangeError, /base/);
  rejects(() => pe.encode(3, 8, { minTimescale: 0 }), RangeError, /minTimescale/);
  rejects(() => pe.encode(3, 8, { minTimescale: 20000 }), RangeError, /base.*minTimescale/);
  rejects(() => pe.encode(3, 8, { minTimescale: 1e-310 }), RangeError, /minTimescale/); // found by fuzz_encode
  rejects(() => pe.encode(3, 8, { preset: 'bert' }), RangeError, /preset/);
  rejects(() => pe.encode(3, 8, { layout: 'diagonal' }), RangeError, /layout/);
  rejects(() => pe.encode(3, 7, { preset: 'whisper' }), RangeError, /even/);
  rejects(() => pe.encode(3, 2, { preset: 'fairseq' }), RangeError, /at least 4/);
  rejects(() => pe.encode(3, 8, { offset: -1 }), RangeError, /offset/);
  rejects(() => pe.encode(3, 8, { offset: 2 ** 31 }), RangeError, /offset/);
  rejects(() => pe.encode(3, 8, { positions: [1, 2] }), RangeError, /positions.*3 entries/);
  rejects(() => pe.encode(3, 8, { positions: [1, -2, 3] }), RangeError, /positions\[1\]/);
  rejects(() => pe.encode(3, 8, { positions: [1, NaN, 3] }), RangeError, /positions\[1\]/);
  rejects(() => pe.encode(3, 8, { paddingMask: [0, 2, 0] }), RangeError, /paddingMask\[1\]/);
  rejects(() => pe.encode(3, 8, { paddingMask: [0, 1] }), RangeError, /paddingMask/);
  rejects(() => pe.encode(3, 8, { out: new Float32Array(23) }), RangeError, /out.*24/);
  rejects(() => pe.addTo(new Float32Array(10), 4), RangeError, /multiple of dim/);
  rejects(() => pe.addTo(new Float32Array(8), 4, { scale: NaN }), RangeError, /scale/);
  rejects(() => pe.shift(NaN, 8), RangeError, /k/);
});

test('misspelt and misplaced options are rejected, not ignored', () => {
  rejects(() => pe.encode(3, 8, { offest: 2 }), TypeError, /unknown option 'offest'/);
  rejects(() => pe.encode(3, 8, { scale: 2 }), TypeError, /unknown option 'scale'/);
  rejects(() => pe.encode(3, 8, { paddingIdx: 0 }), TypeError, /paddingIdx.*fairseq/);
  rejects(() => pe.encode(3, 8, { positions: [1, 2, 3], offset: 1 }), TypeError, /either positions/);
});

test('detached buffers are refused with a clear error', () => {
  const emb = new Float32Array(8);
  structuredClone(emb.buffer, { transfer: [emb.buffer] });
  rejects(() => pe.addTo(emb, 4), TypeError, /detached/);
});

test('SharedArrayBuffer-backed arrays work (copied in and out)', () => {
  const emb = new Float32Array(new SharedArrayBuffer(4 * 16));
  pe.addTo(emb, 8);
  assert.deepEqual(Array.from(emb), Array.from(pe.encode(2, 8)));
  const out = new Float32Array(new SharedArrayBuffer(4 * 16));
  pe.encode(2, 8, { out });
  assert.deepEqual(Array.from(out), Array.from(pe.encode(2, 8)));
});
