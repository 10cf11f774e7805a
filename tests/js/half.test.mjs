// Issue 25: dtype 'float16' / 'bfloat16' for pe.encode and enc.encode. Every value must be the
// float16 (bf16) nearest to sin/cos of the REAL angle, rounded once from the exact value, as
// tests/fixtures/exact/half.json holds it (tests/fixtures/exact/gen_half.py: mpmath at 200 bits,
// the real frequencies of gen_exact.py). Its midpoint cases hold rows where rounding posenc's
// float32 again would be wrong (double rounding: the fixture counts them, and the test checks
// that converting the float32 output with bindings/js/float16.js would indeed differ). Both builds
// (SIMD, baseline), both entries (posenc, posenc/encoding); consecutive rows, explicit positions,
// one row at a time through an encoder, `out` arrays.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { bfloat16Bits, float16Bits } from '../../bindings/js/float16.js';
import { fixtureDir, loadEncodingPackage, loadPackage } from './helpers.mjs';

const fixture = JSON.parse(readFileSync(join(fixtureDir, 'exact', 'half.json'), 'utf8'));
const unpack = (text) => {
  const bytes = inflateSync(Buffer.from(text, 'base64'));
  return new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
};
const cases = fixture.cases.map((c) => ({ ...c, f16: unpack(c.f16), bf16: unpack(c.bf16) }));
const bitsOf = (a) => (a instanceof Uint16Array ? a : new Uint16Array(a.buffer, a.byteOffset, a.length));
const consecutive = (p) => p.every((x, i) => x === p[0] + i);

function firstDifference(actual, expected, dim) {
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] !== expected[i]) {
      return `row ${Math.floor(i / dim)} column ${i % dim}: 0x${actual[i].toString(16)}, expected 0x${expected[i].toString(16)}`;
    }
  }
  return null;
}

test('the fixture has midpoint cases where double rounding differs, and nothing undecided', () => {
  for (const c of cases) assert.equal(c.undecided, 0, c.id);
  assert.ok(cases.find((c) => c.id === 'f16-midpoints-d64').f16DoubleRoundingDiffers >= 10);
  assert.ok(cases.find((c) => c.id === 'bf16-midpoints-d64').bf16DoubleRoundingDiffers >= 10);
});

const entries = [
  ['posenc', await loadPackage()],
  ['posenc/encoding', await loadEncodingPackage()],
];
const F16 = globalThis.Float16Array;

for (const [entry, { init }] of entries) {
  for (const simd of [true, false]) {
    describe(`${entry}, ${simd ? 'SIMD' : 'baseline'} build: 16-bit values rounded once`, async () => {
      const pe = await init({ simd });
      test('the build asked for runs', () => assert.equal(pe.simd, simd));

      test('beyond 2^31 radians (outside the float32 contract) a midpoint goes to even: the rounding of the float32 value', () => {
        // minTimescale 1e70: position 26's column 58 is the float32 -0.975341796875, a float16
        // midpoint, at an angle near 2.6e71 radians. Its side used to be asked of the double-double
        // series, which has no bound there (an "undecided" RangeError here; natively fuzz_encode
        // found the series' quadrant count overflowing).
        const options = { offset: 26, minTimescale: 1e70, base: 1e70 * 1e4 };
        const f32 = pe.encode(1, 64, options);
        assert.equal(f32[58], -0.975341796875);
        const got = bitsOf(pe.encode(1, 64, { ...options, dtype: 'float16' }));
        assert.deepEqual(Array.from(got), Array.from(f32, float16Bits));
        assert.equal(got[58], float16Bits(-0.975341796875));
      });

      for (const c of cases) {
        for (const [dtype, key, twice] of [['float16', 'f16', float16Bits], ['bfloat16', 'bf16', bfloat16Bits]]) {
          test(`${c.id}, ${dtype}: explicit positions${consecutive(c.positions) ? ', offset' : ''}, an encoder row by row`, () => {
            const expected = c[key];
            const n = c.positions.length;
            const got = pe.encode(n, c.dim, { ...c.options, positions: c.positions, dtype });
            assert.equal(got.constructor, dtype === 'float16' && F16 ? F16 : Uint16Array);
            assert.equal(firstDifference(bitsOf(got), expected, c.dim), null);
            if (consecutive(c.positions)) {
              const rows = pe.encode(n, c.dim, { ...c.options, offset: c.positions[0], dtype });
              assert.equal(firstDifference(bitsOf(rows), expected, c.dim), null);
            }
            const enc = pe.encoder({ dim: c.dim, ...c.options });
            try {
              const out = new Uint16Array(c.dim + 3);
              for (let r = 0; r < n; r += 7) {
                const row = enc.encode(1, { positions: [c.positions[r]], dtype, out });
                assert.equal(row.length, c.dim);
                const want = expected.subarray(r * c.dim, (r + 1) * c.dim);
                assert.equal(firstDifference(row, want, c.dim), null, `row ${r}`);
                const one = enc.encode(1, { offset: c.positions[r], dtype });
                assert.equal(firstDifference(bitsOf(one), want, c.dim), null, `row ${r} (offset)`);
              }
            } finally {
              enc.dispose();
            }
            // The float32 output rounded again: differs exactly where the fixture says it does.
            const f32 = pe.encode(n, c.dim, { ...c.options, positions: c.positions });
            let differs = 0;
            for (let i = 0; i < f32.length; i++) if (twice(f32[i]) !== expected[i]) differs++;
            assert.equal(differs, c[`${key}DoubleRoundingDiffers`]);
          });
        }
      }

      test("encode2d 'mae': rows [1D(j) | 1D(i)] rounded once, in both 16-bit formats", { skip: !pe.encode2d }, () => {
        const c = cases.find((x) => x.id === 'mae-1d-d256-split');
        for (const [dtype, key] of [['float16', 'f16'], ['bfloat16', 'bf16']]) {
          const t = bitsOf(pe.encode2d(4096, 1, 512, { dtype }));
          assert.equal(t.length, 4096 * 512);
          c.positions.forEach((p, r) => {
            const want = c[key].subarray(r * 256, (r + 1) * 256);
            assert.equal(firstDifference(t.subarray(p * 512 + 256, (p + 1) * 512), want, 256), null, `${dtype} row ${p}`);
          });
          // Column coordinate j = 0 throughout: cos 0 = 1, sin 0 = 0.
          assert.equal(t[256 * 0 + 128], dtype === 'float16' ? 0x3c00 : 0x3f80);
          const timm = pe.encode2d(3, 5, 16, { preset: 'timm', clsToken: true, dtype });
          assert.equal(timm.length, 16 * 16);
          const f32 = pe.encode2d(3, 5, 16, { preset: 'timm', clsToken: true });
          const twice = dtype === 'float16' ? float16Bits : bfloat16Bits;
          assert.deepEqual([...bitsOf(timm)], [...f32].map(twice)); // no midpoints in this small table
        }
        assert.throws(() => pe.encode2d(2, 2, 8, { dtype: 'half' }), /posenc\.encode2d: dtype must be one of 'float32', 'float16', 'bfloat16'/);
      });

      test('a padding mask: the numbered rows are the same values', () => {
        const c = cases.find((x) => x.id === 'f16-midpoints-d64');
        const p = c.positions[5];
        const mask = [0, 1, 0, 0, 1, 0];
        const got = pe.encode(6, 64, { offset: p - 1, paddingMask: mask, dtype: 'float16' });
        const full = pe.encode(6, 64, { offset: p - 1, dtype: 'float16' });
        // Rows 2 and 3 are numbered p - 1 + 1 and p - 1 + 2: the full table's rows 1 and 2.
        assert.deepEqual([...bitsOf(got).subarray(128, 256)], [...bitsOf(full).subarray(64, 192)]);
        assert.ok(bitsOf(got).subarray(64, 128).every((x) => x === 0));
        assert.equal(firstDifference(bitsOf(pe.encode(1, 64, { positions: [p], dtype: 'float16' })), c.f16.subarray(5 * 64, 6 * 64), 64), null);
      });

      test('out: Uint16Array (or Float16Array) at least as long, else an error', () => {
        const out = new Uint16Array(100);
        const got = pe.encode(3, 32, { dtype: 'bfloat16', out });
        assert.equal(got.buffer, out.buffer);
        assert.equal(got.length, 96);
        assert.throws(() => pe.encode(3, 32, { dtype: 'float16', out: new Uint16Array(95) }), /out must hold at least 96 values/);
        assert.throws(() => pe.encode(3, 32, { dtype: 'float16', out: new Float32Array(96) }), /posenc\.encode: out must be a Uint16Array or Float16Array/);
        assert.throws(() => pe.encode(3, 32, { dtype: 'float64' }), /posenc\.encode: dtype must be one of 'float32', 'float16', 'bfloat16'/);
        assert.ok(pe.encode(3, 32, { dtype: 'float32' }) instanceof Float32Array);
      });
    });
  }
}
