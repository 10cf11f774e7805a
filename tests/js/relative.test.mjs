// posenc/relative against PyTorch's own values (tests/fixtures/relative/, made by gen_relative.py
// from ports of Hugging Face's T5 and DeBERTa-v2 code run on torch 1.13): T5 buckets at every edge
// distance of ten settings, [q, k] grids with offsets, bias gathers bit for bit, config.json
// reading for t5 / mt5 / umt5 / pix2struct / deberta-v2; DeBERTa's log buckets, c2p / p2c indices
// and the distances where HF's float32 chain differs from exact arithmetic. Also the float32 log
// both ways (fast path and double-double) and the shapes and dtypes of the outputs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { fixtureDir, root } from './helpers.mjs';
import { logf, logfFromDoubleDouble } from '../../bindings/js/float32_log.js';

const packageDir = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const { relativeBuckets, relativeBias, RELATIVE_MODEL_TYPES } = await import(pathToFileURL(join(packageDir, 'relative.js')).href);
const t5 = JSON.parse(readFileSync(join(fixtureDir, 'relative', 't5.json'), 'utf8'));
const deberta = JSON.parse(readFileSync(join(fixtureDir, 'relative', 'deberta.json'), 'utf8'));

/** T5's bucket of one relative position r = key - query (one query at offset max(0, -r)). */
function t5One(r, options) {
  const offset = Math.max(0, -r);
  const key = r + offset;
  return relativeBuckets(1, key + 1, { ...options, offset })[key];
}

/** DeBERTa's value for r = query - key (the last query against the last key). */
function debertaOne(r, options) {
  const q = Math.max(r, 0) + 1;
  const k = Math.max(-r, 0) + 1;
  return relativeBuckets(q, k, { scheme: 'deberta', ...options })[q * k - 1];
}

describe('T5 buckets (T5Attention._relative_position_bucket)', () => {
  for (const s of t5.settings) {
    const options = { numBuckets: s.numBuckets, maxDistance: s.maxDistance, bidirectional: s.bidirectional };
    test(`${s.numBuckets}/${s.maxDistance} ${s.bidirectional ? 'bidirectional' : 'causal'}: every edge distance as torch`, () => {
      let checked = 0;
      s.relativePositions.forEach((r, i) => {
        if (Math.abs(r) > 2 ** 21) return; // 2^24 and 2^30: below
        assert.equal(t5One(r, options), s.buckets[i], `relative position ${r}`);
        assert.equal(s.buckets[i], s.exactBuckets[i]);
        checked++;
      });
      assert.ok(checked > 40);
      assert.deepEqual(s.scan.float32DisagreesWithExact, []);
    });
  }
  test('a distance of 2^24 and 2^30 (float32 rounds the distance)', () => {
    const s = t5.settings[0];
    for (const r of [-(2 ** 24), -(2 ** 24) - 1, -(2 ** 30)]) {
      const i = s.relativePositions.indexOf(r);
      assert.ok(i >= 0);
      // one query at offset -r against key 0
      assert.equal(relativeBuckets(1, 1, { offset: -r })[0], s.buckets[i]);
    }
  });
  for (const g of t5.grids) {
    test(`grid: ${g.note} (${g.queryLength} x ${g.keyLength}, offset ${g.offset})`, () => {
      const b = relativeBuckets(g.queryLength, g.keyLength, {
        numBuckets: g.numBuckets, maxDistance: g.maxDistance, bidirectional: g.bidirectional, offset: g.offset,
      });
      assert.ok(b instanceof Int32Array);
      assert.deepEqual([...b], g.buckets);
    });
  }
  test('invalid settings (maxDistance <= maxExact) are RangeErrors, as HF fails', () => {
    for (const c of t5.invalid) {
      assert.throws(() => relativeBuckets(2, 2, { numBuckets: c.numBuckets, maxDistance: c.maxDistance, bidirectional: c.bidirectional }),
        { name: 'RangeError', message: /maxDistance must be greater than maxExact/ });
    }
  });
});

describe('T5 bias (T5Attention.compute_bias)', () => {
  for (const c of t5.bias) {
    test(`${c.id}: bit for bit`, () => {
      const table = new Float32Array(c.table);
      const options = { numBuckets: c.numBuckets, maxDistance: c.maxDistance, bidirectional: c.bidirectional, offset: c.offset };
      const expected = new Float32Array(c.expected);
      const bias = relativeBias(table, c.heads, c.queryLength, c.keyLength, options);
      assert.deepEqual(new Uint32Array(bias.buffer), new Uint32Array(expected.buffer));
      // as a tensor, into out, and from a tensor table
      const out = new Float32Array(expected.length).fill(7);
      const t = relativeBias({ data: table, dims: [c.numBuckets, c.heads] }, c.heads, c.queryLength, c.keyLength, { ...options, out, as: 'tensor' });
      assert.equal(t.data, out);
      assert.deepEqual(t.dims, [1, c.heads, c.queryLength, c.keyLength]);
      assert.equal(t.type, 'float32');
      assert.deepEqual(new Uint32Array(out.buffer), new Uint32Array(expected.buffer));
      // the bias is the table gathered by relativeBuckets
      const b = relativeBuckets(c.queryLength, c.keyLength, options);
      for (let h = 0; h < c.heads; h++) {
        for (let i = 0; i < b.length; i++) assert.ok(Object.is(bias[h * b.length + i], table[b[i] * c.heads + h]));
      }
    });
  }
  test('a large grid equals a direct gather (offset, causal, odd numBuckets)', () => {
    for (const options of [{}, { bidirectional: false, offset: 100 }, { numBuckets: 33, maxDistance: 100 }, { numBuckets: 64, maxDistance: 256, offset: 1 << 20 }]) {
      const heads = 3;
      const nb = options.numBuckets ?? 32;
      const table = Float32Array.from({ length: nb * heads }, (_, i) => Math.fround(Math.sin(i + 1)));
      const [q, k] = [97, 301];
      const bias = relativeBias(table, heads, q, k, options);
      const offset = options.offset ?? 0;
      for (let i = 0; i < q; i += 7) {
        for (let j = 0; j < k; j += 5) {
          const bucket = t5One(j - (offset + i), { ...options, offset: undefined });
          for (let h = 0; h < heads; h++) assert.ok(Object.is(bias[(h * q + i) * k + j], table[bucket * heads + h]));
        }
      }
    }
  });
});

describe('T5-family configs', () => {
  for (const c of t5.configs) {
    test(`${c.id}`, () => {
      for (const attention of ['encoder', 'decoder']) {
        const e = c.expected[attention];
        if (e === null) {
          assert.throws(() => relativeBuckets(3, 3, { config: c.config, attention }), { name: 'RangeError', message: /no relative position bias/ });
          continue;
        }
        const fromConfig = relativeBuckets(40, 300, { config: c.config, attention, offset: 5 });
        const explicit = relativeBuckets(40, 300, { numBuckets: e.numBuckets, maxDistance: e.maxDistance, bidirectional: e.bidirectional, offset: 5 });
        assert.deepEqual(fromConfig, explicit);
        // JSON text reads the same
        assert.deepEqual(relativeBuckets(40, 300, { config: JSON.stringify(c.config), attention, offset: 5 }), explicit);
      }
      assert.equal(c.expected.cross, null);
    });
  }
  test('the model types read', () => {
    assert.deepEqual([...RELATIVE_MODEL_TYPES], ['t5', 'mt5', 'umt5', 'pix2struct', 'deberta-v2']);
  });
});

describe('DeBERTa-v2 relative positions (build_relative_position, make_log_bucket_position)', () => {
  for (const s of deberta.settings) {
    const options = { positionBuckets: s.positionBuckets, maxRelativePositions: s.maxRelativePositions };
    test(`${s.positionBuckets}/${s.maxRelativePositions}: every edge position, c2p and p2c as torch`, () => {
      s.relativePositions.forEach((r, i) => {
        if (Math.abs(r) > 2 ** 21) return;
        assert.equal(debertaOne(r, options), s.buckets[i], `relative position ${r}`);
        assert.equal(debertaOne(r, { ...options, output: 'c2p' }), s.c2pIndex[i], `c2p at ${r}`);
        if (Math.abs(r) < 4096) {
          // p2c of a square grid: clamp(-relative + attSpan) at (i, j) = c2p at (j, i)
          const n = Math.abs(r) + 1;
          const p2c = relativeBuckets(n, n, { scheme: 'deberta', ...options, output: 'p2c' });
          assert.equal(r >= 0 ? p2c[n * n - n] : p2c[n - 1], s.p2cIndex[i], `p2c at ${r}`);
        }
      });
    });
    if (s.scan) {
      test(`${s.positionBuckets}/${s.maxRelativePositions}: where HF's float32 differs from exact (scan to 2^20)`, () => {
        for (const d of s.scan.float32DisagreesWithExact) {
          // posenc gives the float32 chain with a correctly rounded logf: torch's value except
          // where torch's own logf is not correctly rounded (listed in correctlyRoundedLogfDiffers).
          assert.equal(debertaOne(d.distance, options), d.correctlyRoundedLogf, `distance ${d.distance}`);
          assert.equal(debertaOne(-d.distance, options), -d.correctlyRoundedLogf);
          if (!s.scan.correctlyRoundedLogfDiffers.includes(d.distance)) assert.equal(d.correctlyRoundedLogf, d.hf);
          assert.equal(debertaOne(d.distance, { ...options, output: 'c2p' }), d.c2pIndexHf);
        }
        assert.ok(s.scan.correctlyRoundedLogfDiffers.length <= 1);
      });
    }
  }
  test("the issue's example: +-10134 with 64/256 is 118 in HF's float32 (119 exactly)", () => {
    assert.equal(debertaOne(10134, { positionBuckets: 64, maxRelativePositions: 256 }), 118);
    assert.equal(debertaOne(-10134, { positionBuckets: 64, maxRelativePositions: 256 }), -118);
  });
  for (const g of deberta.grids) {
    test(`grid: ${g.note}`, () => {
      const options = { scheme: 'deberta', positionBuckets: g.positionBuckets, maxRelativePositions: g.maxRelativePositions };
      assert.deepEqual([...relativeBuckets(g.queryLength, g.keyLength, options)], g.relativePositions);
      assert.deepEqual([...relativeBuckets(g.queryLength, g.keyLength, { ...options, output: 'c2p' })], g.c2pIndex);
      const p2c = relativeBuckets(g.queryLength, g.keyLength, { ...options, output: 'p2c', as: 'tensor' });
      assert.deepEqual(p2c.dims, g.p2cShape);
      assert.deepEqual([...p2c.data], g.p2cIndex);
    });
  }
  for (const c of deberta.configs) {
    test(`config ${c.id}`, () => {
      const e = c.expected;
      if (!e.relativeAttention) {
        assert.throws(() => relativeBuckets(4, 4, { scheme: 'deberta', config: c.config }), { name: 'RangeError', message: /relative_attention must be true/ });
        return;
      }
      const explicit = { scheme: 'deberta', positionBuckets: e.positionBuckets, maxRelativePositions: e.maxRelativePositions };
      for (const output of ['relative', 'c2p', 'p2c']) {
        assert.deepEqual(relativeBuckets(30, 30, { scheme: 'deberta', config: c.config, output }), relativeBuckets(30, 30, { ...explicit, output }));
      }
      // c2p indices lie in [0, 2 attSpan - 1]: attSpan as HF's pos_ebd_size
      const c2p = relativeBuckets(600, 600, { scheme: 'deberta', config: c.config, output: 'c2p' });
      assert.equal(c2p.reduce((a, b) => Math.max(a, b)), 2 * e.attSpan - 1);
      assert.equal(c2p.reduce((a, b) => Math.min(a, b)), 0);
    });
  }
  test('quirks: position_buckets 1 is refused; a negative log divisor runs backwards as in HF', () => {
    const [zero, backwards] = deberta.quirks;
    assert.throws(() => relativeBuckets(2, 2, { scheme: 'deberta', positionBuckets: zero.positionBuckets, maxRelativePositions: zero.maxRelativePositions }),
      { name: 'RangeError', message: /positionBuckets must be at least 2/ });
    backwards.relativePositions.forEach((r, i) => {
      assert.equal(debertaOne(r, { positionBuckets: backwards.positionBuckets, maxRelativePositions: backwards.maxRelativePositions }), backwards.hf[i]);
    });
  });
});

describe('outputs', () => {
  test('dtype int64 and as tensor', () => {
    const b = relativeBuckets(5, 7, { offset: 2 });
    const t = relativeBuckets(5, 7, { offset: 2, dtype: 'int64', as: 'tensor' });
    assert.ok(t.data instanceof BigInt64Array);
    assert.deepEqual(t.dims, [5, 7]);
    assert.equal(t.type, 'int64');
    assert.deepEqual([...t.data].map(Number), [...b]);
    const d = relativeBuckets(1, 2 ** 24, { scheme: 'deberta', positionBuckets: -1, dtype: 'int64' });
    assert.equal(d[2 ** 24 - 1], -(2n ** 24n - 1n));
  });
});

describe('float32 log', () => {
  test('the fast path and the double-double path agree (random float32, near powers of two, small and large)', () => {
    let seed = 12345;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const bits = new Uint32Array(1);
    const f = new Float32Array(bits.buffer);
    let n = 0;
    for (let i = 0; i < 200000; i++) {
      bits[0] = next() & 0x7f7fffff;
      if (f[0] === 0 || !Number.isFinite(f[0])) continue;
      assert.equal(logf(f[0]), logfFromDoubleDouble(f[0]), `x = ${f[0]}`);
      n++;
    }
    for (let e = -20; e <= 40; e++) {
      for (const x of [2 ** e, Math.fround(2 ** e * (1 + 2 ** -23)), Math.fround(2 ** e * (1 - 2 ** -24))]) {
        assert.equal(logf(x), logfFromDoubleDouble(x), `x = ${x}`);
      }
    }
    // every distance ratio of T5's default setting and DeBERTa-v3's, up to 2^16
    for (let d = 1; d <= 65536; d++) {
      for (const m of [8, 16, 128]) {
        const x = Math.fround(d / m);
        assert.equal(logf(x), logfFromDoubleDouble(x));
      }
    }
    assert.ok(n > 190000);
  });
  test('known values', () => {
    assert.equal(logf(1), 0);
    assert.equal(logf(Math.E), Math.fround(1));
    assert.equal(logf(2), Math.fround(Math.LN2));
    assert.equal(logfFromDoubleDouble(2), Math.fround(Math.LN2));
    assert.equal(logfFromDoubleDouble(0.5), -Math.fround(Math.LN2));
    assert.equal(logfFromDoubleDouble(10), Math.fround(Math.LN10));
  });
});

describe('16-bit outputs (dtype float16 / bfloat16)', () => {
  /** The float16 nearest to float32 x by search: every candidate's distance in exact double arithmetic. */
  function referenceFloat16(x) {
    if (Number.isNaN(x)) return 0x7e00;
    const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
    const a = Math.abs(x);
    const value = (bits) => {
      const e = (bits >> 10) & 31;
      const m = bits & 1023;
      return e === 0 ? m * 2 ** -24 : e === 31 ? Infinity : (1024 + m) * 2 ** (e - 25);
    };
    // binary search for the largest finite float16 <= a
    let lo = 0;
    let hi = 0x7bff;
    if (a >= value(hi)) lo = hi;
    else {
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (value(mid) <= a) lo = mid; else hi = mid;
      }
    }
    const below = value(lo);
    const above = lo === 0x7bff ? 65536 : value(lo + 1); // 65536 stands for infinity's rounding point
    const dl = a - below;
    const du = above - a;
    let bits = dl < du || (dl === du && lo % 2 === 0) ? lo : lo + 1;
    if (bits > 0x7bff) bits = 0x7c00;
    return sign | bits;
  }
  test('float16Bits rounds once to nearest, ties to even: every float16, every midpoint and its float32 neighbours, random float32', async () => {
    const { float16Bits, bfloat16Bits } = await import('../../bindings/js/float16.js');
    const f = new Float32Array(1);
    const u = new Uint32Array(f.buffer);
    const check = (x) => assert.equal(float16Bits(x), referenceFloat16(Math.fround(x)), `x = ${x}`);
    const value = (bits) => {
      const e = (bits >> 10) & 31;
      const m = bits & 1023;
      return e === 0 ? m * 2 ** -24 : (1024 + m) * 2 ** (e - 25);
    };
    for (let b = 0; b < 0x7c00; b++) {
      const v = value(b);
      const mid = b < 0x7bff ? (v + value(b + 1)) / 2 : 65520;
      for (const x of [v, -v, mid, -mid]) {
        check(x);
        f[0] = x;
        const bits = u[0];
        u[0] = bits + 1;
        check(f[0]);
        u[0] = bits - 1;
        if (x !== 0) check(f[0]);
      }
    }
    let seed = 99;
    for (let i = 0; i < 100000; i++) {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      u[0] = seed;
      if (Number.isFinite(f[0])) check(f[0]);
    }
    assert.equal(float16Bits(65504), 0x7bff);
    assert.equal(float16Bits(Math.fround(65519.996)), 0x7bff);
    assert.equal(float16Bits(65520), 0x7c00);
    assert.equal(float16Bits(-Infinity), 0xfc00);
    assert.equal(float16Bits(NaN), 0x7e00);
    assert.equal(float16Bits(-0), 0x8000);
    assert.equal(float16Bits(2 ** -25), 0); // halfway to the smallest subnormal: ties to even (0)
    assert.equal(float16Bits(Math.fround(2 ** -25 * (1 + 2 ** -23))), 1);
    // bfloat16: the top 16 bits of the float32, rounded to nearest even
    assert.equal(bfloat16Bits(1), 0x3f80);
    assert.equal(bfloat16Bits(Math.fround(1 + 2 ** -8)), 0x3f80); // tie, even
    assert.equal(bfloat16Bits(Math.fround(1 + 3 * 2 ** -8)), 0x3f82); // tie, up to even
    assert.equal(bfloat16Bits(Math.fround(1 + 2 ** -8 + 2 ** -20)), 0x3f81);
    assert.equal(bfloat16Bits(NaN) & 0x7fc0, 0x7fc0);
    assert.equal(bfloat16Bits(3.4028234663852886e38), 0x7f80); // rounds up to infinity
  });
  test('relativeBias in float16 and bfloat16: each value the table entry rounded once', async () => {
    const { float16Bits, bfloat16Bits } = await import('../../bindings/js/float16.js');
    const c = t5.bias[0];
    const table = new Float32Array(c.table);
    const options = { numBuckets: c.numBuckets, maxDistance: c.maxDistance, bidirectional: c.bidirectional, offset: c.offset };
    const ref = relativeBias(table, c.heads, c.queryLength, c.keyLength, options);
    const half = relativeBias(table, c.heads, c.queryLength, c.keyLength, { ...options, dtype: 'float16' });
    const bf = relativeBias(table, c.heads, c.queryLength, c.keyLength, { ...options, dtype: 'bfloat16', as: 'tensor' });
    const bits = typeof globalThis.Float16Array === 'function' ? new Uint16Array(half.buffer) : half;
    assert.ok(bits instanceof Uint16Array);
    assert.deepEqual([...bits], [...ref].map(float16Bits));
    assert.equal(bf.type, 'bfloat16');
    assert.deepEqual(bf.dims, [1, c.heads, c.queryLength, c.keyLength]);
    assert.deepEqual([...bf.data], [...ref].map(bfloat16Bits));
    const out = new Uint16Array(ref.length);
    assert.equal(relativeBias(table, c.heads, c.queryLength, c.keyLength, { ...options, dtype: 'float16', out }), out);
    assert.deepEqual([...out], [...bits]);
    assert.throws(() => relativeBias(table, c.heads, c.queryLength, c.keyLength, { ...options, dtype: 'float16', out: new Float32Array(ref.length) }),
      { name: 'TypeError', message: /out must be a Uint16Array/ });
  });
});
