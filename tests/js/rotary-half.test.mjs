// Issue 25: rot.cosSin({ dtype: 'float16' | 'bfloat16' }). Each value must be the 16-bit value
// nearest to the exact cos(p w) or sin(p w) (w the config's float32 frequency, p w the real
// product): where posenc's float32 is not a 16-bit rounding midpoint, that is the float32 rounded
// to 16 bits (bindings/js/float16.js, ties to even: docs/PRECISION.md, "16-bit outputs"); at the
// midpoints tests/fixtures/exact/rotary_half.json (mpmath at 200 bits, gen_rotary_half.py) gives
// the answer, and the fixture counts where rounding the float32 again would be wrong. With an
// attention scaling A != 1 the value is HF's float32 product, rounded once (ties to even).
// Both builds, both entries; HF and ORT cache layouts, `out`, tensors, a multimodal table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { bfloat16Bits, float16Bits } from '../../bindings/js/float16.js';
import { fixtureDir, loadEncodingPackage, loadPackage } from './helpers.mjs';

const fixture = JSON.parse(readFileSync(join(fixtureDir, 'exact', 'rotary_half.json'), 'utf8'));
const F16 = globalThis.Float16Array;
const bitsOf = (a) => (a instanceof Uint16Array ? a : new Uint16Array(a.buffer, a.byteOffset, a.length));
const round16 = [float16Bits, bfloat16Bits];
const f32bits = (x) => new Uint32Array(Float32Array.of(x).buffer)[0];

/** Whether the float32 x is a rounding midpoint of format 0 (float16) or 1 (bfloat16). */
function isMidpoint(x, format) {
  const a = f32bits(x) & 0x7fffffff;
  if (a === 0 || a >= 0x7f800000) return false;
  if (format === 1) return (a & 0xffff) === 0x8000;
  if (a >= 0x38800000) return (a & 0x1fff) === 0x1000 && a <= 0x477ff000;
  const m = Math.abs(x) * 2 ** 25;
  return Number.isInteger(m) && m % 2 === 1;
}

test('the fixture holds midpoints where rounding the float32 again is wrong', () => {
  for (const [name, c] of Object.entries(fixture.cases)) {
    assert.ok(c.midpoints.length >= 10, name);
    assert.ok(c.differs >= 5, name);
    assert.equal(c.differs, c.midpoints.filter((m) => m[4] !== m[5]).length, name);
  }
});

const QWENVL = { model_type: 'qwen2_vl', hidden_size: 128, num_attention_heads: 4, rope_theta: 1000000, rope_scaling: { type: 'mrope', mrope_section: [4, 6, 6] } };
const QWEN_PLAIN = { model_type: 'qwen2', hidden_size: 128, num_attention_heads: 4, rope_theta: 1000000 };

for (const [entry, { init }] of [['posenc', await loadPackage()], ['posenc/encoding', await loadEncodingPackage()]]) {
  for (const simd of [true, false]) {
    describe(`${entry}, ${simd ? 'SIMD' : 'baseline'} build: rot.cosSin dtype`, async () => {
      const pe = await init({ simd });
      test('the build asked for runs', () => assert.equal(pe.simd, simd));

      for (const [name, c] of Object.entries(fixture.cases)) {
        test(`${name}: every value the 16-bit value nearest to the exact one, both formats`, () => {
          const rot = pe.rotary({ preset: c.preset });
          try {
            assert.deepEqual(Array.from(rot.inverseFrequencies), c.invFreq);
            const range = c.positions.length === 2 && name.indexOf('far') < 0;
            const length = range ? c.positions[1] : c.positions.length;
            const options = range ? { offset: c.positions[0] } : { positions: c.positions };
            const f32 = rot.cosSin(length, options);
            const rd = rot.rotaryDim;
            const half = rot.layout !== 'interleaved';
            // the fixture's midpoints by [table, row, column, format]
            const want = new Map();
            for (const [table, row, j, format, bits] of c.midpoints) {
              const columns = half ? [j, j + rd / 2] : [2 * j, 2 * j + 1];
              for (const col of columns) want.set(`${table},${row},${col},${format}`, bits);
            }
            for (const [format, dtype] of [[0, 'float16'], [1, 'bfloat16']]) {
              const got = rot.cosSin(length, { ...options, dtype });
              assert.equal(got.cos.constructor, format === 0 && F16 ? F16 : Uint16Array);
              let midpoints = 0;
              let differs = 0;
              for (const [table, key] of [[0, 'cos'], [1, 'sin']]) {
                const bits = bitsOf(got[key]);
                const ref = f32[key];
                assert.equal(bits.length, ref.length);
                for (let i = 0; i < ref.length; i++) {
                  const row = Math.floor(i / rd);
                  const col = i % rd;
                  const again = round16[format](ref[i]);
                  if (isMidpoint(ref[i], format)) {
                    const expected = want.get(`${table},${row},${col},${format}`);
                    assert.notEqual(expected, undefined, `${key} row ${row} column ${col}: a midpoint the fixture does not list`);
                    assert.equal(bits[i], expected, `${key} row ${row} column ${col}`);
                    midpoints++;
                    if (expected !== again) differs++;
                  } else if (bits[i] !== again) {
                    assert.fail(`${key} row ${row} column ${col}: 0x${bits[i].toString(16)}, expected 0x${again.toString(16)}`);
                  }
                }
              }
              // every listed midpoint was met (each frequency appears in two columns)
              assert.equal(midpoints, 2 * c.midpoints.filter((m) => m[3] === format).length);
              if (format === 0) assert.ok(differs > 0, 'no value where rounding twice would be wrong');
            }
          } finally {
            rot.dispose();
          }
        });
      }

      test("ORT's cache layout, out arrays, tensors: the same bits as the HF table", () => {
        for (const preset of ['llama-2-7b', 'gpt-j-6b']) {
          const rot = pe.rotary({ preset });
          try {
            const rd = rot.rotaryDim;
            const hf = rot.cosSin(300, { offset: 7, dtype: 'float16' });
            const ort = rot.cosSin(300, { offset: 7, dtype: 'float16', cache: 'ort', as: 'tensor' });
            assert.deepEqual(ort.cos.dims, [300, rd / 2]);
            assert.equal(ort.cos.type, 'float16');
            const step = rot.layout === 'interleaved' ? 2 : 1;
            for (const key of ['cos', 'sin']) {
              const a = bitsOf(hf[key]);
              const b = bitsOf(ort[key].data);
              for (let r = 0; r < 300; r++) for (let j = 0; j < rd / 2; j++) assert.equal(b[r * (rd / 2) + j], a[r * rd + j * step]);
            }
            const out = { cos: new Uint16Array(300 * rd), sin: new Uint16Array(300 * rd) };
            const into = rot.cosSin(300, { offset: 7, dtype: 'bfloat16', out });
            assert.equal(into.cos, out.cos);
            assert.deepEqual(into.sin, bitsOf(rot.cosSin(300, { offset: 7, dtype: 'bfloat16' }).sin));
            if (F16) {
              const o16 = { cos: new F16(300 * rd), sin: new F16(300 * rd) };
              assert.equal(rot.cosSin(300, { offset: 7, dtype: 'float16', out: o16 }).cos, o16.cos);
              assert.deepEqual(bitsOf(o16.cos), bitsOf(hf.cos));
            }
          } finally {
            rot.dispose();
          }
        }
      });

      test('attention scaling != 1 (YaRN): the float32 product rounded once, ties to even', () => {
        const rot = pe.rotary({ preset: 'qwen2.5-7b-instruct-yarn' });
        try {
          assert.notEqual(rot.attentionScaling, 1);
          const f32 = rot.cosSin(2048, { offset: 30000 });
          for (const [format, dtype] of [[0, 'float16'], [1, 'bfloat16']]) {
            const got = rot.cosSin(2048, { offset: 30000, dtype });
            for (const key of ['cos', 'sin']) {
              const bits = bitsOf(got[key]);
              for (let i = 0; i < bits.length; i++) if (bits[i] !== round16[format](f32[key][i])) assert.fail(`${key}[${i}]`);
            }
          }
        } finally {
          rot.dispose();
        }
      });

      test('multimodal (Qwen2-VL): three equal position rows give the plain table, midpoints included', () => {
        const mm = pe.rotary({ config: QWENVL });
        const plain = pe.rotary({ config: QWEN_PLAIN });
        try {
          const p = Array.from({ length: 3000 }, (_, i) => (i * 37) % 5000);
          for (const dtype of ['float16', 'bfloat16']) {
            const a = mm.cosSin(p.length, { positions: [p, p, p], dtype });
            const b = plain.cosSin(p.length, { positions: p, dtype });
            assert.deepEqual(bitsOf(a.cos), bitsOf(b.cos));
            assert.deepEqual(bitsOf(a.sin), bitsOf(b.sin));
          }
          // different rows: each frequency follows its section's row (the float32 table, rounded)
          const t = p.map((x) => x % 7);
          const f32 = mm.cosSin(p.length, { positions: [t, p, p] });
          const h = mm.cosSin(p.length, { positions: [t, p, p], dtype: 'float16' });
          const bits = bitsOf(h.cos);
          let checked = 0;
          for (let i = 0; i < bits.length; i++) {
            if (!isMidpoint(f32.cos[i], 0)) {
              assert.equal(bits[i], float16Bits(f32.cos[i]));
              checked++;
            }
          }
          assert.ok(checked > 0.99 * bits.length);
        } finally {
          mm.dispose();
          plain.dispose();
        }
      });

      test('rot.apply on 16-bit data in place: each output the 16-bit rounding of the float32 rotation', () => {
        // The reference decodes the bits exactly (its own arithmetic), rotates the float32 copy with
        // the float32 API and rounds each result once with bindings/js/float16.js.
        const decode = (h, format) => {
          if (format === 1) return new Float32Array(new Uint32Array([h << 16]).buffer)[0];
          const e = (h >> 10) & 31;
          const m = h & 1023;
          const v = e === 31 ? (m ? NaN : Infinity) : e === 0 ? m * 2 ** -24 : (1024 + m) * 2 ** (e - 25);
          return h & 0x8000 ? -v : v;
        };
        for (const preset of ['llama-2-7b', 'gpt-j-6b']) {
          const rot = pe.rotary({ preset });
          try {
            const [B, L, H, D] = [2, 37, 3, rot.headDim];
            const n = B * L * H * D;
            for (const [format, dtype] of [[0, 'float16'], [1, 'bfloat16']]) {
              const bits = new Uint16Array(n);
              for (let i = 0; i < n; i++) bits[i] = round16[format](Math.sin(i * 0.37 + format) * (i % 7 === 0 ? 300 : 2));
              bits[5] = 0x0001; // a subnormal float16 (a tiny bf16)
              const positions = [Array.from({ length: L }, (_, i) => 3 * i), Array.from({ length: L }, (_, i) => 1000 + i)];
              for (const order of ['bshd', 'bhsd']) {
                const ref = Float32Array.from(bits, (h) => decode(h, format));
                rot.apply(ref, { order, batch: B, heads: H, positions });
                const x = bits.slice();
                assert.equal(rot.apply(x, { order, batch: B, heads: H, positions, dtype }), x);
                for (let i = 0; i < n; i++) if (x[i] !== round16[format](ref[i])) assert.fail(`${preset} ${dtype} ${order} [${i}]: 0x${x[i].toString(16)}, expected 0x${round16[format](ref[i]).toString(16)}`);
                // a tensor (ORT's { data, dims, type }) gives the same bits and returns its data
                const t = { data: bits.slice(), dims: order === 'bhsd' ? [B, H, L, D] : [B, L, H, D], type: dtype };
                const out = rot.apply(t, { order, positions, dtype, as: 'tensor' });
                assert.equal(out.data, t.data);
                assert.equal(out.type, dtype);
                assert.deepEqual(t.data, x);
              }
              if (F16 && format === 0) {
                const f = new F16(bits.slice().buffer);
                rot.apply(f, { order: 'bshd', batch: B, heads: H, positions });
                const x = bits.slice();
                rot.apply(x, { order: 'bshd', batch: B, heads: H, positions, dtype: 'float16' });
                assert.deepEqual(new Uint16Array(f.buffer), x);
              }
            }
          } finally {
            rot.dispose();
          }
        }
      });

      test('rot.apply on 16-bit data leaves the channels beyond rotaryDim as they are, bit for bit', () => {
        // As the float32 call leaves them: NaN payloads, -0 and subnormals too (a round trip through
        // float32 would make every NaN the canonical one).
        const kept = [0x7d01, 0xfe55, 0x8000, 0x0001, 0x7c00, 0x3c00];
        for (const preset of ['gpt-neox-20b', 'gpt-j-6b']) {
          const rot = pe.rotary({ preset });
          try {
            const [B, L, H, D, R] = [2, 9, 3, rot.headDim, rot.rotaryDim];
            assert.ok(R < D, `${preset} rotates part of each head`);
            const bits = new Uint16Array(B * L * H * D);
            for (let i = 0; i < bits.length; i++) bits[i] = i % D < R ? 0x3c00 | (i % 1024) : kept[i % kept.length];
            for (const dtype of ['float16', 'bfloat16']) {
              for (const order of ['bshd', 'bhsd']) {
                const x = bits.slice();
                rot.apply(x, { order, batch: B, heads: H, offset: 5, dtype });
                for (let i = 0; i < x.length; i++) {
                  if (i % D >= R && x[i] !== bits[i]) assert.fail(`${preset} ${dtype} ${order} [${i}]: 0x${x[i].toString(16)}, was 0x${bits[i].toString(16)}`);
                }
                assert.notDeepEqual(x, bits, 'the rotated channels changed');
              }
            }
          } finally {
            rot.dispose();
          }
        }
      });

      test('bad dtype and out arrays: clear errors, and the instance keeps working', () => {
        const rot = pe.rotary({ preset: 'llama-2-7b' });
        try {
          assert.throws(() => rot.cosSin(4, { dtype: 'float64' }), { name: 'RangeError', message: /rotary\.cosSin: dtype must be one of 'float32', 'float16', 'bfloat16'/ });
          assert.throws(() => rot.cosSin(4, { dtype: 'float16', out: { cos: new Float32Array(512), sin: new Float32Array(512) } }), { name: 'TypeError', message: /out\.cos must be a Uint16Array or Float16Array/ });
          assert.throws(() => rot.cosSin(4, { dtype: 'bfloat16', out: { cos: new Uint16Array(512) } }), { name: 'TypeError', message: /out\.sin must be a Uint16Array/ });
          assert.throws(() => rot.cosSin(4, { dtype: 'float16', out: { cos: new Uint16Array(513), sin: new Uint16Array(512) } }), { name: 'RangeError', message: /out\.cos\.length/ });
          assert.throws(() => rot.cosSin(4, { dtype: 'float16', out: { cos: new Uint16Array(511), sin: new Uint16Array(512) } }), { name: 'RangeError' });
          assert.throws(() => rot.apply(new Uint16Array(512), { heads: 1 }), { name: 'TypeError', message: /x is a Uint16Array: give dtype 'float16' or 'bfloat16'/ });
          assert.throws(() => rot.apply(new Float32Array(512), { heads: 1, dtype: 'bfloat16' }), { name: 'TypeError', message: /x must be a Uint16Array \(dtype 'bfloat16'\), got a Float32Array/ });
          assert.throws(() => rot.apply(new Uint16Array(512), { heads: 1, dtype: 'int8' }), { name: 'RangeError', message: /dtype must be one of/ });
          assert.equal(rot.cosSin(4, { dtype: 'float16' }).cos.length, 512);
        } finally {
          rot.dispose();
        }
      });
    });
  }
}
