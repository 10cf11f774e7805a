// The JS API: options, out arrays, addTo, concat, shift, encoders, and the precision bound.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BOUND, loadPackage, maxAbsDiff, oracleTable } from './helpers.mjs';

const { init, simdSupported } = await loadPackage();

test('simdSupported agrees with what init picks by default', async () => {
  const pe = await init();
  assert.equal(pe.simd, simdSupported());
});

for (const simd of [true, false]) {
  describe(`API (${simd ? 'SIMD' : 'baseline'})`, async () => {
    const pe = await init({ simd });

    test('seed 000: L=100, D=50, position 0 and position 5', () => {
      const t = pe.encode(100, 50);
      for (let c = 0; c < 50; c++) assert.equal(t[c], c % 2 === 0 ? 0 : 1);
      const row5 = t.subarray(250, 300);
      assert.ok(Math.abs(row5[0] - Math.sin(5)) < 1e-7);
      assert.ok(Math.abs(row5[1] - Math.cos(5)) < 1e-7);
      assert.ok(Math.abs(row5[2] - -0.312) < 5e-4);
      assert.ok(Math.abs(row5[3] - -0.95) < 5e-4);
    });

    test('every layout, frequency rule and odd policy within 2^-22 at large positions', () => {
      const positions = [0, 1, 2, 12345, 100000, 1048576, 16777215];
      for (const dim of [1, 2, 3, 6, 51, 64]) {
        for (const layout of ['interleaved', 'split']) {
          for (const frequencies of ['paper', 'half']) {
            for (const odd of ['paper', 'zero-pad']) {
              const spec = { dim, layout, frequencies, odd, base: 10000, minTimescale: 1 };
              const got = pe.encode(positions.length, dim, { layout, frequencies, odd, positions });
              assert.ok(maxAbsDiff(got, oracleTable(spec, positions)) <= BOUND, JSON.stringify(spec));
            }
          }
        }
      }
    });

    test('consecutive rows equal explicit positions and offsets slice the table', () => {
      const full = pe.encode(300, 34, { offset: 16777000 });
      const explicit = pe.encode(300, 34, { positions: Array.from({ length: 300 }, (_, r) => 16777000 + r) });
      // Fast paths may take different (equally exact) routes: both are within 2^-22 of float64.
      assert.ok(maxAbsDiff(full, explicit) <= 2 * BOUND);
      const part = pe.encode(100, 34, { offset: 16777200 });
      assert.ok(maxAbsDiff(part, full.subarray(200 * 34)) <= 2 * BOUND);
    });

    test('incremental decoding: one-row calls equal the bulk rows bit for bit, several streams at once', () => {
      for (const preset of ['vaswani', 'whisper', 'fairseq']) {
        const dim = 512;
        const enc = pe.encoder({ dim, preset });
        const starts = [0, 1000, 2 ** 20, 2 ** 24 - 100, 61, 5000, 123457, 9, 777, 2 ** 23];
        const span = 100;
        const bulk = starts.map((offset) => enc.encode(span, { offset }));
        const row = new Float32Array(dim);
        const emb = new Float32Array(dim);
        for (let k = 0; k < span; k++) {
          for (let s = 0; s < starts.length; s++) {
            const want = bulk[s].subarray(k * dim, (k + 1) * dim);
            const viaEncoder = enc.encode(1, { offset: starts[s] + k, out: row });
            assert.deepEqual(viaEncoder, want, `${preset} stream ${s} row ${k}`);
            assert.deepEqual(pe.encode(1, dim, { preset, offset: starts[s] + k }), want);
            emb.fill(0.5);
            enc.addTo(emb, { offset: starts[s] + k, scale: 2 });
            for (let c = 0; c < dim; c++) assert.equal(emb[c], Math.fround(1 + want[c]));
          }
        }
        // and within the precision bound of float64
        const spec = { dim, layout: 'interleaved', frequencies: 'paper', odd: 'paper', base: 10000, minTimescale: 1 };
        if (preset === 'vaswani') {
          const positions = starts.map((s) => s + span - 1);
          const got = pe.encode(positions.length, dim, { positions });
          assert.ok(maxAbsDiff(got, oracleTable(spec, positions)) <= BOUND);
          for (let s = 0; s < starts.length; s++) {
            const last = bulk[s].subarray((span - 1) * dim);
            assert.ok(maxAbsDiff(last, oracleTable(spec, [positions[s]])) <= BOUND);
          }
        }
        enc.dispose();
      }
    });

    test('repeated free-function calls follow option changes and handle-cache evictions', () => {
      const spec = (dim, layout = 'interleaved') => ({ dim, layout, frequencies: 'paper', odd: 'paper', base: 10000, minTimescale: 1 });
      const first = pe.encode(3, 8, { offset: 5 });
      assert.ok(maxAbsDiff(first, oracleTable(spec(8), [5, 6, 7])) <= BOUND);
      // same options object shape, other values: each must be honoured
      assert.ok(maxAbsDiff(pe.encode(1, 8, { offset: 5, layout: 'split' }), oracleTable(spec(8, 'split'), [5])) <= BOUND);
      assert.ok(maxAbsDiff(pe.encode(1, 8, { offset: 5, base: 100 }), oracleTable({ ...spec(8), base: 100 }, [5])) <= BOUND);
      assert.ok(maxAbsDiff(pe.encode(1, 10, { offset: 5 }), oracleTable(spec(10), [5])) <= BOUND);
      // evict every cached encoder (more dims than the cache holds), then the first spec again
      for (let d = 20; d < 60; d++) pe.encode(1, d, { offset: 5 });
      assert.deepEqual(pe.encode(3, 8, { offset: 5 }), first);
      const emb = new Float32Array(8);
      for (let d = 20; d < 60; d++) pe.addTo(new Float32Array(d), d);
      assert.deepEqual(pe.addTo(emb, 8, { offset: 5 }), first.subarray(0, 8));
      // evictions through shift and concat, which share the remembered spec and the handle cache
      pe.encode(3, 8, { offset: 5 });
      for (let d = 20; d < 60; d += 2) pe.shift(1, d, { form: 'blocks' });
      assert.deepEqual(pe.encode(3, 8, { offset: 5 }), first);
      for (let d = 20; d < 40; d++) pe.concat(new Float32Array(2), 2, d);
      assert.deepEqual(pe.addTo(new Float32Array(8), 8, { offset: 5 }), first.subarray(0, 8));
      // a bad value after a good call is still refused
      assert.throws(() => pe.encode(1, 8, { offset: 5, base: -1 }), RangeError);
      assert.throws(() => pe.encode(1, 8.5, { offset: 5 }), RangeError);
      assert.deepEqual(pe.encode(3, 8, { offset: 5 }), first);
    });

    test('large tables go through the chunked path intact', () => {
      const length = 5000;
      const dim = 64;
      const t = pe.encode(length, dim);
      const rows = [0, 1023, 1024, 1025, 2047, 2048, 4999];
      for (const r of rows) {
        const expected = oracleTable({ dim, layout: 'interleaved', frequencies: 'paper', odd: 'paper' }, [r]);
        assert.ok(maxAbsDiff(t.subarray(r * dim, (r + 1) * dim), expected) <= BOUND, `row ${r}`);
      }
    });

    test('out: filled in place, larger out gives a subarray, the result is JS-owned', () => {
      const out = new Float32Array(8 * 6);
      const r = pe.encode(8, 6, { out });
      assert.equal(r, out);
      assert.deepEqual(out, pe.encode(8, 6));
      const big = new Float32Array(100).fill(7);
      const s = pe.encode(2, 6, { out: big });
      assert.equal(s.length, 12);
      assert.equal(s.buffer, big.buffer);
      assert.equal(big[12], 7);
      const fresh = pe.encode(4, 4);
      assert.notEqual(fresh.buffer, pe._module.HEAPF32.buffer);
      pe.encode(1 << 16, 256); // grows wasm memory
      assert.equal(fresh.length, 16);
    });

    test('addTo is emb * scale + PE, in place, with padding rows only scaled', () => {
      const dim = 51;
      const emb = Float32Array.from({ length: dim * 40 }, (_, i) => Math.sin(i * 0.37) * 3);
      const copy = emb.slice();
      const scale = Math.sqrt(dim);
      const table = pe.encode(40, dim, { offset: 1000 });
      const r = pe.addTo(emb, dim, { offset: 1000, scale });
      assert.equal(r, emb);
      for (let i = 0; i < emb.length; i++) {
        const want = Math.fround(copy[i] * Math.fround(scale)) + table[i];
        assert.ok(Math.abs(emb[i] - want) <= 4e-6, `at ${i}`);
      }
      const padded = new Float32Array(3 * 8).fill(2);
      pe.addTo(padded, 8, { preset: 'fairseq', paddingMask: [1, 0, 1], scale: 0.5 });
      for (const i of [0, 1, 2, 7, 16, 23]) assert.equal(padded[i], 1);
      assert.ok(Math.abs(padded[8] - (1 + Math.sin(2))) < 1e-6);
    });

    test('concat puts the embedding then the encoding', () => {
      const emb = Float32Array.from({ length: 3 * 5 }, (_, i) => i);
      const out = pe.concat(emb, 5, 4, { offset: 2 });
      const table = pe.encode(3, 4, { offset: 2 });
      assert.equal(out.length, 27);
      for (let r = 0; r < 3; r++) {
        assert.deepEqual(out.subarray(r * 9, r * 9 + 5), emb.subarray(r * 5, r * 5 + 5));
        assert.deepEqual(out.subarray(r * 9 + 5, r * 9 + 9), table.subarray(r * 4, r * 4 + 4));
      }
    });

    test('shift maps PE(p) to PE(p + k) in both layouts and forms', () => {
      for (const layout of ['interleaved', 'split']) {
        for (const k of [1, 7, -3, 1000]) {
          const dim = 32;
          const m = pe.shift(k, dim, { layout });
          assert.equal(m.length, dim * dim);
          for (const p of [5, 1234, 1e6]) {
            const from = pe.encode(1, dim, { layout, positions: [p] });
            const to = pe.encode(1, dim, { layout, positions: [p + k] });
            let worst = 0;
            for (let r = 0; r < dim; r++) {
              let acc = 0;
              for (let c = 0; c < dim; c++) acc += m[r * dim + c] * from[c];
              worst = Math.max(worst, Math.abs(acc - to[r]));
            }
            assert.ok(worst <= BOUND, `layout ${layout} k ${k} p ${p}: ${worst}`);
          }
        }
      }
      const blocks = pe.shift(2, 8, { form: 'blocks' });
      assert.equal(blocks.length, 8);
      assert.ok(Math.abs(blocks[0] - Math.cos(2)) < 1e-7 && Math.abs(blocks[1] - Math.sin(2)) < 1e-7);
      assert.throws(() => pe.shift(1, 5), /odd/);
    });

    test('encoder objects: reuse, dispose, use after dispose, Symbol.dispose', () => {
      const enc = pe.encoder({ dim: 16, preset: 'whisper' });
      assert.equal(enc.layout, 'split');
      assert.deepEqual(enc.encode(10, { offset: 3 }), pe.encode(10, 16, { preset: 'whisper', offset: 3 }));
      const emb = new Float32Array(32).fill(1);
      enc.addTo(emb, { scale: 2 });
      assert.ok(Math.abs(emb[16] - (2 + Math.sin(1))) < 1e-6); // row 1, column 0: 1 * 2 + sin(1 * w_0)
      assert.ok(Math.abs(emb[24] - (2 + Math.cos(1))) < 1e-6); // split: the cosine block starts at 8
      assert.equal(enc.disposed, false);
      enc.dispose();
      assert.equal(enc.disposed, true);
      assert.throws(() => enc.encode(1), /disposed/);
      enc.dispose();
      if (typeof Symbol.dispose === 'symbol') {
        const e2 = pe.encoder({ dim: 4 });
        e2[Symbol.dispose]();
        assert.equal(e2.disposed, true);
      }
    });

    test('instances are independent', async () => {
      const other = await init({ simd });
      assert.notEqual(other._module, pe._module);
      assert.deepEqual(other.encode(3, 8), pe.encode(3, 8));
    });
  });
}
