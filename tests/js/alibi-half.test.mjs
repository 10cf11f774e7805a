// Issue 25: dtype 'float16' / 'bfloat16' for pe.alibiBias and alibiModelBias. pe.alibiBias: every
// value the 16-bit value nearest to the EXACT -(m d) (the float64 slope m times the integer
// distance d, rounded once: not through float32, not through float64); masked entries -Infinity's
// bits or maskValue rounded once. alibiModelBias: the framework's float32 value (BLOOM's and MPT's
// code computes in float32) rounded once to 16 bits. The oracle is
// tests/fixtures/exact/alibi_half.json (gen_alibi_half.py: Python Fractions). Its "midpoints"
// cases hold entries whose float32 is a 16-bit rounding midpoint where rounding posenc's float32
// again would be wrong (counted, so the test can fail); every other entry is checked against this
// test's own rounding (bindings/js/float16.js) of posenc's float32 output. Both builds (SIMD,
// baseline), both entries (posenc, posenc/encoding).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { bfloat16Bits, float16Bits } from '../../bindings/js/float16.js';
import { fixtureDir, loadEncodingPackage, loadPackage, root } from './helpers.mjs';

const fixture = JSON.parse(readFileSync(join(fixtureDir, 'exact', 'alibi_half.json'), 'utf8'));
const inflate = (text) => inflateSync(Buffer.from(text, 'base64'));
const u16 = (text) => {
  const b = inflate(text);
  return new Uint16Array(b.buffer, b.byteOffset, b.length / 2);
};
const u32 = (text) => {
  const b = inflate(text);
  return new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
};
const bitsOf = (a) => (a instanceof Uint16Array ? a : new Uint16Array(a.buffer, a.byteOffset, a.length));
const F16 = globalThis.Float16Array;
const FORMATS = [['float16', 'f16', float16Bits], ['bfloat16', 'bf16', bfloat16Bits]];

function firstDifference(actual, expected) {
  if (actual.length !== expected.length) return `length ${actual.length}, expected ${expected.length}`;
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] !== expected[i]) return `index ${i}: 0x${actual[i].toString(16)}, expected 0x${expected[i].toString(16)}`;
  }
  return null;
}

/** A float32 value (as a number) that is a float16 (format 0) / bf16 (1) rounding midpoint. */
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
function isMidpoint(v, format) {
  F32[0] = v;
  const a = U32[0] & 0x7fffffff;
  if (a >= 0x7f800000 || a === 0) return false;
  if (format === 1) return (a & 0xffff) === 0x8000;
  return a >= 0x38800000 && a <= 0x477ff000 && (a & 0x1fff) === 0x1000;  // (no float16 subnormal in ALiBi)
}

test('the fixture has midpoints where rounding the float32 again is wrong, and model cases with a float32 constant', () => {
  const [h12, h40] = fixture.midpoints;
  assert.ok(h40.differs.f16 >= 100 && h40.differs.bf16 >= 100, JSON.stringify(h40.differs));
  assert.ok(h12.differs.f16 >= 1, JSON.stringify(h12.differs));
  for (const c of fixture.midpoints) assert.equal(u32(c.points).length / 4, c.differs.f16 + c.differs.bf16);
  assert.ok(fixture.models.some((c) => c.model === 'bloom' && c.realDiffers > 0));
  assert.ok(fixture.models.some((c) => c.model === 'mpt' && c.realDiffers > 0));
  assert.ok(fixture.full.some((c) => c.options.maskValue === -65504) && fixture.full.some((c) => c.options.attentionMask && c.options.maskValue === undefined));
});

const entries = [
  ['posenc', await loadPackage()],
  ['posenc/encoding', await loadEncodingPackage()],
];

for (const [entry, { init }] of entries) {
  for (const simd of [true, false]) {
    describe(`${entry}, ${simd ? 'SIMD' : 'baseline'} build: pe.alibiBias with a 16-bit dtype`, async () => {
      const pe = await init({ simd });
      test('the build asked for runs', () => assert.equal(pe.simd, simd));

      for (const c of fixture.full) {
        test(`${c.id}: every value, float16 and bfloat16, array and tensor`, () => {
          assert.deepEqual(Array.from(pe.alibiSlopes(c.heads), (s) => s), c.slopes.map(hexToNumber));
          const batch = c.options.attentionMask?.length ?? 1;
          for (const [dtype, key] of FORMATS) {
            const got = pe.alibiBias(c.heads, c.queryLength, c.keyLength, { ...c.options, dtype });
            assert.equal(got.constructor, dtype === 'float16' && F16 ? F16 : Uint16Array);
            assert.equal(firstDifference(bitsOf(got), u16(c[key])), null, dtype);
            const t = pe.alibiBias(c.heads, c.queryLength, c.keyLength, { ...c.options, dtype, as: 'tensor' });
            assert.deepEqual([t.type, t.dims], [dtype, [batch, c.heads, c.queryLength, c.keyLength]]);
            assert.equal(firstDifference(bitsOf(t.data), u16(c[key])), null, `${dtype} tensor`);
          }
        });
      }

      for (const c of fixture.midpoints) {
        test(`heads ${c.heads}, distances 0..${c.D}: the midpoints the fixture decides, every other value rounded from float32`, () => {
          assert.deepEqual(Array.from(pe.alibiSlopes(c.heads)), c.slopes.map(hexToNumber));
          const k = c.D + 1;
          const f32 = pe.alibiBias(c.heads, 1, k, { offset: c.D });
          const points = u32(c.points);
          FORMATS.forEach(([dtype, key, round], format) => {
            const expected = Uint16Array.from(f32, round);
            let decided = 0;
            let againWrong = 0;
            for (let p = 0; p < points.length; p += 4) {
              if (points[p + 2] !== format) continue;
              const x = points[p] * k + (c.D - points[p + 1]);
              assert.ok(isMidpoint(f32[x], format), `head ${points[p]} distance ${points[p + 1]}: float32 ${f32[x]} is no midpoint`);
              againWrong += expected[x] !== points[p + 3];
              expected[x] = points[p + 3];
              decided++;
            }
            assert.equal(decided, c.differs[key]);
            assert.equal(againWrong, decided, 'each listed value differs from the float32 rounded again');
            // The fixture's search found every midpoint of posenc's float32 output.
            assert.equal(f32.filter((v) => isMidpoint(v, format)).length, c.midpoints[key]);
            const got = bitsOf(pe.alibiBias(c.heads, 1, k, { offset: c.D, dtype }));
            assert.equal(firstDifference(got, expected), null, dtype);
          });
        });
      }

      test('batch copies, symmetric keys ahead, large offsets: the float32 rounded where it is no midpoint', () => {
        const calls = [
          [3, 4, 6, { batch: 2, mode: 'symmetric' }],
          [24, 7, 5, { offset: 2 ** 31 - 1 - 6, mode: 'symmetric' }],
          [5, 9, 30, { attentionMask: { data: Uint8Array.from({ length: 60 }, (_, i) => (i * 7) % 3 > 0), dims: [2, 30] }, maskValue: -1e9 }],
        ];
        for (const [h, q, k, o] of calls) {
          const f32 = pe.alibiBias(h, q, k, o);
          for (const [dtype, , round] of FORMATS) {
            const got = bitsOf(pe.alibiBias(h, q, k, { ...o, dtype }));
            const expected = Uint16Array.from(f32, round);
            for (let x = 0; x < f32.length; x++) if (isMidpoint(f32[x], dtype === 'float16' ? 0 : 1)) expected[x] = got[x];
            assert.equal(firstDifference(got, expected), null, `${dtype} ${JSON.stringify([h, q, k])}`);
          }
        }
      });

      test("dtype 'float32' is the default; another dtype is a RangeError", () => {
        const a = pe.alibiBias(12, 3, 4);
        assert.deepEqual(pe.alibiBias(12, 3, 4, { dtype: 'float32' }), a);
        assert.deepEqual(pe.alibiBias(12, 3, 4, { dtype: 'float32', as: 'tensor' }).type, 'float32');
        assert.throws(() => pe.alibiBias(12, 3, 4, { dtype: 'float64' }), {
          name: 'RangeError',
          message: `posenc.alibiBias: dtype must be one of 'float32', 'float16', 'bfloat16', got the string "float64"`,
        });
      });
    });
  }
}

describe('alibiModelBias with a 16-bit dtype: the framework float32 rounded once', async () => {
  const { alibiModelBias } = await import(pathToFileURL(join(process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist'), 'relative.js')).href);
  for (const c of fixture.models) {
    test(`${c.id}: every value`, () => {
      const options = { model: c.model, heads: c.heads };
      if (c.attentionMask) options.attentionMask = c.attentionMask;
      if (c.alibiBiasMax) options.alibiBiasMax = c.alibiBiasMax;
      for (const [dtype, key] of FORMATS) {
        const t = alibiModelBias(c.keyLength, { ...options, dtype, as: 'tensor' });
        assert.equal(t.type, dtype);
        assert.equal(firstDifference(bitsOf(t.data), u16(c[key])), null, dtype);
      }
    });
  }
});

/** float.hex text ('0x1.ae89f995ad3adp-1') as a number, exactly. */
function hexToNumber(text) {
  const m = /^(-?)0x([01])\.([0-9a-f]+)p([+-]\d+)$/.exec(text);
  assert.ok(m, text);
  const mantissa = Number.parseInt(m[2] + m[3], 16) / 16 ** m[3].length;  // 53 bits: exact
  return (m[1] ? -1 : 1) * mantissa * 2 ** Number(m[4]);
}
