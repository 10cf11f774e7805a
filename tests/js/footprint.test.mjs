// Working memory of the encoding is O(dim x block), never O(length x dim): a 1,000,000 x 64 encode
// (256 MB of output) goes through the fixed scratch region and leaves wasm memory as it was.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadPackage, maxAbsDiff, oracleTable, BOUND } from './helpers.mjs';

const { init } = await loadPackage();

for (const simd of [true, false]) {
  test(`a 1,000,000 x 64 encode allocates nothing in wasm beyond its scratch (${simd ? 'SIMD' : 'baseline'})`, async () => {
    const pe = await init({ simd });
    const M = pe._module;
    pe.encode(4096, 64); // sizes the instance's scratch region (256 KB) and builds the tables, once
    const memoryBefore = M.HEAPU8.buffer.byteLength;
    const heapBefore = M.heapInUse();
    const length = 1_000_000;
    const t = pe.encode(length, 64);
    assert.equal(t.length, length * 64);
    // Had the table (256 MB) or any O(length) buffer been built in wasm, memory would have grown.
    assert.equal(M.HEAPU8.buffer.byteLength, memoryBefore);
    assert.ok(memoryBefore < 64 * 2 ** 20, `wasm memory is ${memoryBefore} bytes`);
    assert.equal(M.heapInUse(), heapBefore);
    const spec = { dim: 64, layout: 'interleaved', frequencies: 'paper', odd: 'paper', base: 10000, minTimescale: 1 };
    for (const r of [0, 65535, 65536, 999_999]) {
      assert.ok(maxAbsDiff(t.subarray(r * 64, (r + 1) * 64), oracleTable(spec, [r])) <= BOUND, `row ${r}`);
    }
    const emb = new Float32Array(length * 64);
    pe.addTo(emb, 64);
    assert.equal(M.HEAPU8.buffer.byteLength, memoryBefore);
    assert.equal(M.heapInUse(), heapBefore);
    assert.deepEqual(emb.subarray(0, 64 * 8), t.subarray(0, 64 * 8));
  });
}
