// ALiBi with a key padding mask (issue 25): pe.alibiBias(heads, q, k, { attentionMask, batch,
// maskValue, as }) against PyTorch's masked_fill of the same bias (tests/fixtures/alibi/models.json,
// "padded"), in both builds; every mask form (rows, flat with batch, typed arrays incl.
// BigInt64Array, tensors) against the same values; maskValue in the causal part; the GPU-tensor
// check before data is read. And the models' own forms (bindings/js/alibi_models.js: BLOOM's and
// Falcon's build_alibi_tensor, MPT's build_mpt_alibi_tensor) bit for bit against PyTorch, with
// torch's float32 pow compared across its CPU kernels for heads 1..256 (see gen_alibi_models.py).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fixtureDir, loadPackage } from './helpers.mjs';
import { bloomSlopes, mptSlopes, writeModelBias } from '../../bindings/js/alibi_models.js';

const fixture = JSON.parse(readFileSync(join(fixtureDir, 'alibi', 'models.json'), 'utf8'));
const { init } = await loadPackage();

/** A base64 fixture field as a Float32Array (little-endian, as written by gen_alibi_models.py). */
function floats(text) {
  const bytes = Buffer.from(text, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}
const bits = (a) => new Uint32Array(a.buffer, a.byteOffset, a.length);

/** Indices where two Float32Arrays differ in bits. */
function differing(a, b) {
  assert.equal(a.length, b.length);
  const x = bits(a);
  const y = bits(b);
  const out = [];
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) out.push(i);
  return out;
}

/** The distance in float32 ulps between two positive float32 values. */
const ulps = (a, b) => Math.abs(bits(Float32Array.of(a))[0] - bits(Float32Array.of(b))[0]);

for (const simd of [true, false]) {
  describe(`alibiBias with a key padding mask (${simd ? 'SIMD' : 'baseline'} build)`, async () => {
    const pe = await init({ simd });

    test('[batch, heads, q, k] equals PyTorch masked_fill of the bias (fixture "padded")', () => {
      assert.ok(fixture.padded.length >= 12);
      for (const c of fixture.padded) {
        const maskValue = c.maskValue === '-Infinity' ? -Infinity : c.maskValue;
        const out = pe.alibiBias(c.heads, c.queryLength, c.keyLength, { mode: c.mode, offset: c.offset, attentionMask: c.mask, maskValue });
        const want = floats(c.bits);
        assert.equal(out.length, want.length);
        for (let i = 0; i < out.length; i++) {
          // Finite values: the core's float32(-m d) against torch's float64 product rounded (one
          // rounding each from slopes that agree to 1e-15: at most one ulp, as in rotary.test.mjs).
          const ok = out[i] === want[i] || (Number.isFinite(want[i]) && Math.abs(out[i] - want[i]) <= Math.abs(want[i]) * 2 ** -23);
          assert.ok(ok, `${c.heads} ${c.mode} ${c.offset} ${c.maskValue} [${i}]: ${out[i]} vs ${want[i]}`);
          if (want[i] === maskValue) assert.equal(out[i], maskValue);
        }
      }
    });

    test('each batch row is the unmasked bias with its masked keys (and only those) set to maskValue', () => {
      const [heads, q, k] = [4, 3, 6];
      const plain = pe.alibiBias(heads, q, k, { mode: 'symmetric', offset: 3 });
      const rows = [[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]];
      const out = pe.alibiBias(heads, q, k, { mode: 'symmetric', offset: 3, attentionMask: rows, maskValue: -1e4 });
      assert.equal(out.length, rows.length * plain.length);
      for (let b = 0; b < rows.length; b++) {
        for (let x = 0; x < plain.length; x++) {
          const want = rows[b][x % k] ? plain[x] : Math.fround(-1e4);
          assert.ok(Object.is(out[b * plain.length + x], want), `batch ${b} [${x}]`);
        }
      }
      // Without a mask, batch copies the block; the default output is unchanged.
      assert.deepEqual(pe.alibiBias(heads, q, k, { mode: 'symmetric', offset: 3, batch: 2 }), Float32Array.from([...plain, ...plain]));
    });

    test('maskValue also fills the causal part; -Infinity stays the default', () => {
      const plain = pe.alibiBias(2, 4, 6, { offset: 1 });
      const finite = pe.alibiBias(2, 4, 6, { offset: 1, maskValue: -65504 });
      let hidden = 0;
      for (let i = 0; i < plain.length; i++) {
        if (plain[i] === -Infinity) {
          hidden++;
          assert.equal(finite[i], -65504);
        } else {
          assert.ok(Object.is(finite[i], plain[i]));
        }
      }
      assert.ok(hidden > 0);
      // A fully masked row stays finite: softmax of it is uniform, not NaN.
      const allMasked = pe.alibiBias(1, 2, 3, { attentionMask: [[0, 0, 0]], maskValue: -65504 });
      assert.deepEqual([...allMasked], new Array(6).fill(-65504));
      assert.ok(pe.alibiBias(1, 2, 3, { attentionMask: [[0, 0, 0]] }).every((v) => v === -Infinity));
    });

    test('every mask form gives the same values', () => {
      const rows = [[0, 1, 1, 1, 1], [1, 1, 1, 0, 0]];
      const flat = rows.flat();
      const want = pe.alibiBias(3, 2, 5, { attentionMask: rows });
      const forms = [
        { attentionMask: flat, batch: 2 },
        { attentionMask: Int32Array.from(flat), batch: 2 },
        { attentionMask: Uint8Array.from(flat), batch: 2 },
        { attentionMask: Float32Array.from(flat), batch: 2 },
        { attentionMask: BigInt64Array.from(flat, BigInt), batch: 2 },
        { attentionMask: rows.map((r) => r.map(Boolean)) },
        { attentionMask: rows.map((r) => BigInt64Array.from(r, BigInt)) },
        { attentionMask: rows.map((r) => r.map(BigInt)) },
        { attentionMask: { data: BigInt64Array.from(flat, BigInt), dims: [2, 5], type: 'int64', location: 'cpu' } },
        { attentionMask: { data: flat, dims: [2, 5] }, batch: 2 },
      ];
      for (const options of forms) assert.deepEqual(pe.alibiBias(3, 2, 5, options), want);
      // One row given flat: batch 1.
      assert.deepEqual(pe.alibiBias(3, 2, 5, { attentionMask: rows[1] }), want.subarray(want.length / 2));
    });

    test("as: 'tensor' gives { data, dims, type }", () => {
      const t = pe.alibiBias(2, 3, 4, { as: 'tensor' });
      assert.deepEqual(t.dims, [1, 2, 3, 4]);
      assert.equal(t.type, 'float32');
      assert.deepEqual(t.data, pe.alibiBias(2, 3, 4));
      const m = pe.alibiBias(2, 3, 4, { attentionMask: [[1, 1, 0, 0], [1, 1, 1, 1], [0, 1, 1, 1]], as: 'tensor' });
      assert.deepEqual(m.dims, [3, 2, 3, 4]);
      assert.equal(m.data.length, 72);
      assert.ok(pe.alibiBias(2, 3, 4, { as: 'array' }) instanceof Float32Array);
    });

    test('a GPU tensor is a TypeError before its data is read; bad masks are named', () => {
      let read = false;
      const gpu = { location: 'gpu-buffer', dims: [1, 4], get data() { read = true; return new Float32Array(4); } };
      assert.throws(() => pe.alibiBias(2, 1, 4, { attentionMask: gpu }), { name: 'TypeError', message: /posenc\.alibiBias: attentionMask must be a tensor on the CPU/ });
      assert.equal(read, false);
      assert.throws(() => pe.alibiBias(2, 1, 4, { attentionMask: [[1, 2, 1, 1]] }), { name: 'RangeError', message: /attentionMask\[1\] must be 0, 1, false or true/ });
      assert.throws(() => pe.alibiBias(2, 1, 4, { attentionMask: BigInt64Array.of(1n, 1n, 2n, 1n) }), /attentionMask\[2\] must be 0, 1/);
      assert.throws(() => pe.alibiBias(2, 1, 4, { attentionMask: [1, 1, 1] }), /attentionMask must have 4 entries/);
      assert.throws(() => pe.alibiBias(2, 1, 4, { attentionMask: [[1, 1, 1, 1], [1, 1]] }), /attentionMask must have 8 entries/);
      assert.throws(() => pe.alibiBias(2, 1, 4, { attentionMask: [[1, 1, 1, 1]], batch: 2 }), /batch must be an integer from 1 to 1, got 2/);
    });
  });
}

describe("the models' own forms (alibi_models.js) against PyTorch", () => {
  const run = (model, c) => {
    const out = new Float32Array(floats(c.bits).length);
    writeModelBias(out, ['bloom', 'falcon', 'mpt'].indexOf(model), c.heads, c.keys, c.mask ? c.mask.flat() : null, c.mask ? c.mask.length : 1, c.alibiBiasMax ?? 8);
    return out;
  };

  for (const model of ['bloom', 'falcon', 'mpt']) {
    test(`${model}: every case bit for bit (heads ${[...new Set(fixture[model].map((c) => c.heads))].join(', ')})`, () => {
      assert.ok(fixture[model].length >= 13);
      for (const c of fixture[model]) {
        assert.deepEqual(differing(run(model, c), floats(c.bits)), [], `${model} heads ${c.heads} keys ${c.keys}`);
      }
    });
  }

  test("BLOOM's float32 bases (Python's pow rounded to float32) for p = 1 .. 65536", () => {
    for (const [p, base] of Object.entries(fixture.bases)) {
      assert.equal(Math.fround(2 ** (-8 / Number(p))), Math.fround(base), `p ${p}`);
    }
  });

  test("every power of BLOOM's bases up to 8192 heads is the correctly rounded float32 power", () => {
    let count = 0;
    for (const [p, text] of Object.entries(fixture.correctlyRoundedPowers)) {
      const want = floats(text);
      const base = Math.fround(2 ** (-8 / Number(p)));
      const ours = Float32Array.from(want, (_, i) => base ** (i + 1));
      assert.deepEqual(differing(ours, want), [], `base of p ${p}`);
      count += want.length;
    }
    assert.equal(count, 16383);
    // bloomSlopes reads them so: 8192 heads are the powers 1..8192 of p = 8192's base.
    assert.deepEqual(differing(bloomSlopes(8192), floats(fixture.correctlyRoundedPowers[8192])), []);
  });

  test("BLOOM's slopes for heads 1..256: the correctly rounded float32 power; torch's kernels differ by one ulp", () => {
    const counts = { default: 0, avx2: 0, avx512: 0 };
    for (let n = 1; n <= 256; n++) {
      const ours = bloomSlopes(n);
      const torchDefault = floats(fixture.slopes[n]);
      // The correctly rounded values: torch's default kernel except where the fixture lists them.
      const exact = Float32Array.from(torchDefault);
      for (const [i, v] of fixture.correctlyRounded[n] ?? []) exact[i] = v;
      assert.deepEqual(differing(ours, exact), [], `heads ${n}: not the correctly rounded power`);
      for (const cap of Object.keys(counts)) {
        const theirs = Float32Array.from(torchDefault);
        for (const [i, v] of fixture.slopesElsewhere[cap]?.[n] ?? []) theirs[i] = v;
        for (const i of differing(ours, theirs)) {
          counts[cap]++;
          assert.equal(ulps(ours[i], theirs[i]), 1, `heads ${n} slope ${i} (${cap})`);
        }
      }
    }
    // What docs/API.md states: glibc's powf (torch's scalar kernel) is off in one power (heads
    // 157..256), the AVX2 and AVX-512 loops (SLEEF) in several, and the two loops differ.
    assert.deepEqual(counts, { default: 100, avx2: 342, avx512: 294 });
    // The head counts of real models (BLOOM 16, 32, 112; Falcon-RW 32, 64): torch's default
    // kernel agrees with posenc; its AVX2 loop does not at 16 and 112.
    for (const n of [16, 32, 64, 112]) assert.deepEqual(differing(bloomSlopes(n), floats(fixture.slopes[n])), []);
    assert.deepEqual(Object.keys(fixture.slopesElsewhere.avx2).includes('16'), true);
  });

  test("MPT's slopes for heads 1..256 (alibi_bias_max 8) equal torch's default kernel's", () => {
    let elsewhere = 0;
    for (let n = 1; n <= 256; n++) {
      const ours = mptSlopes(n, 8);
      assert.deepEqual(differing(ours, floats(fixture.mptSlopes[n])), [], `heads ${n}`);
      for (const cap of ['avx2', 'avx512']) elsewhere += (fixture.mptSlopesElsewhere[cap]?.[n] ?? []).length;
    }
    assert.ok(elsewhere > 0, "torch's SIMD kernels differ from its scalar pow for MPT too");
  });

  test('masked keys get position 0 (BLOOM), Falcon rounds to bfloat16, MPT ends at 0', () => {
    const out = new Float32Array(2 * 5);
    writeModelBias(out, 0, 1, 5, Uint8Array.of(0, 0, 1, 1, 1, 1, 1, 1, 0, 0), 2);
    assert.deepEqual([...out], [0, 0, 0, 0.00390625, 0.0078125, 0, 0.00390625, 0.0078125, 0, 0]);
    const falcon = new Float32Array(300 * 3);
    writeModelBias(falcon, 1, 3, 300, null, 1);
    for (const v of falcon) assert.equal(bits(Float32Array.of(v))[0] & 0xffff, 0, 'bfloat16 values');
    const mpt = new Float32Array(4 * 3);
    writeModelBias(mpt, 2, 4, 3, null, 1, 8);
    // Four heads: n2 = 4, slopes 1 / 2^(2k), k = 1 .. 4.
    assert.deepEqual([...mpt], [-0.5, -0.25, 0, -0.125, -0.0625, 0, -(2 ** -5), -(2 ** -6), 0, -(2 ** -7), -(2 ** -8), 0]);
    assert.ok(!mpt.some((v) => Object.is(v, -0)), 'no negative zeros');
  });
});

describe('readAlibiConfig (for the config option, once the models are exported)', () => {
  test('bloom, falcon with alibi, mpt; defaults; other types refused', async () => {
    const { readAlibiConfig } = await import('../../bindings/js/alibi_models.js');
    assert.deepEqual(readAlibiConfig('alibiBias', { model_type: 'bloom', n_head: 16 }), { model: 0, heads: 16, biasMax: 8 });
    assert.deepEqual(readAlibiConfig('alibiBias', { model_type: 'falcon', alibi: true, num_attention_heads: 32 }), { model: 1, heads: 32, biasMax: 8 });
    assert.deepEqual(readAlibiConfig('alibiBias', { model_type: 'mpt', n_heads: 32, attn_config: { alibi_bias_max: 16 } }), { model: 2, heads: 32, biasMax: 16 });
    assert.deepEqual(readAlibiConfig('alibiBias', { model_type: 'mpt' }), { model: 2, heads: 16, biasMax: 8 });
    assert.throws(() => readAlibiConfig('alibiBias', { model_type: 'falcon', num_attention_heads: 71 }), /posenc\.alibiBias: ALiBi is read from a Falcon config with alibi true/);
    assert.throws(() => readAlibiConfig('alibiBias', { model_type: 'llama' }), /config\.model_type one of 'bloom', 'falcon', 'mpt', got "llama"/);
    assert.throws(() => readAlibiConfig('alibiBias', null), RangeError);
  });
});

describe("posenc/relative's alibiModelBias: the models' forms through the public entry", async () => {
  const { alibiModelBias, ALIBI_MODELS } = await import('../../dist/relative.js');
  const f16 = await import('../../bindings/js/float16.js');

  test('every fixture case bit for bit, from { model, heads } with the mask in each form', () => {
    assert.deepEqual([...ALIBI_MODELS], ['bloom', 'falcon', 'mpt']);
    for (const model of ALIBI_MODELS) {
      for (const c of fixture[model]) {
        const want = floats(c.bits);
        const forms = c.mask
          ? [{ attentionMask: c.mask }, { attentionMask: c.mask.flat(), batch: c.mask.length },
            { attentionMask: { data: BigInt64Array.from(c.mask.flat(), BigInt), dims: [c.mask.length, c.keys], location: 'cpu' } }]
          : [model === 'mpt' ? { alibiBiasMax: c.alibiBiasMax ?? 8 } : {}];
        for (const form of forms) {
          const out = alibiModelBias(c.keys, { model, heads: c.heads, ...form });
          assert.deepEqual(differing(out, want), [], `${model} heads ${c.heads} keys ${c.keys}`);
        }
      }
    }
  });

  test('configs: bloom n_head, falcon with alibi, mpt n_heads and alibi_bias_max; shapes; 16-bit dtypes', () => {
    const mask = [[0, 1, 1, 1], [1, 1, 1, 1]];
    const bloom = alibiModelBias(4, { config: { model_type: 'bloom', n_head: 16 }, attentionMask: mask, as: 'tensor' });
    assert.deepEqual(bloom.dims, [32, 1, 4]);
    assert.deepEqual(bloom.data, alibiModelBias(4, { model: 'bloom', heads: 16, attentionMask: mask }));
    assert.deepEqual(alibiModelBias(3, { config: JSON.stringify({ model_type: 'bloom' }) }), alibiModelBias(3, { model: 'bloom', heads: 8 }));
    const falcon = { model_type: 'falcon', alibi: true, num_attention_heads: 32 };
    assert.deepEqual(alibiModelBias(5, { config: falcon }), alibiModelBias(5, { model: 'falcon', heads: 32 }));
    const mpt = alibiModelBias(6, { config: { model_type: 'mpt', n_heads: 12, attn_config: { alibi_bias_max: 16 } }, as: 'tensor' });
    assert.deepEqual(mpt.dims, [12, 1, 6]);
    assert.deepEqual(mpt.data, alibiModelBias(6, { model: 'mpt', heads: 12, alibiBiasMax: 16 }));
    // 16-bit: the model's .to(dtype) of the float32 values, one rounding.
    const f32 = alibiModelBias(9, { model: 'bloom', heads: 5, attentionMask: [[1, 1, 1, 1, 1, 1, 1, 0, 0]] });
    const half = alibiModelBias(9, { model: 'bloom', heads: 5, attentionMask: [[1, 1, 1, 1, 1, 1, 1, 0, 0]], dtype: 'float16', as: 'tensor' });
    assert.equal(half.type, 'float16');
    assert.deepEqual([...new Uint16Array(half.data.buffer)], [...f32].map(f16.float16Bits));
    const bf = alibiModelBias(9, { model: 'mpt', heads: 3, dtype: 'bfloat16' });
    assert.deepEqual([...bf], [...alibiModelBias(9, { model: 'mpt', heads: 3 })].map(f16.bfloat16Bits));
  });

  test('bad input: clear errors, nothing guessed', () => {
    const bad = (options, type, pattern, keys = 4) => assert.throws(() => alibiModelBias(keys, options), { name: type, message: pattern });
    bad({ model: 'gpt2', heads: 2 }, 'RangeError', /model must be one of 'bloom', 'falcon', 'mpt'/);
    bad({ heads: 2 }, 'TypeError', /model must be one of .* \(or give config\)/);
    bad({ model: 'bloom' }, 'TypeError', /heads must be an integer number/);
    bad({ config: { model_type: 'llama' } }, 'RangeError', /config.model_type one of 'bloom', 'falcon', 'mpt', got "llama"/);
    bad({ config: { model_type: 'falcon', alibi: false } }, 'RangeError', /without it Falcon uses RoPE/);
    bad({ config: { model_type: 'bloom' }, heads: 2 }, 'TypeError', /give config, or model and heads, not both/);
    bad({ model: 'bloom', heads: 2, alibiBiasMax: 8 }, 'TypeError', /alibiBiasMax is MPT's/);
    bad({ model: 'mpt', heads: 2, alibiBiasMax: 0 }, 'RangeError', /alibiBiasMax must be a finite number greater than 0/);
    bad({ model: 'mpt', heads: 2, attentionMask: [1, 1, 1, 1] }, 'TypeError', /MPT's bias has no mask and no batch/);
    bad({ model: 'bloom', heads: 2, attentionMask: [1, 1, 2, 1] }, 'RangeError', /attentionMask\[2\] must be an integer from 0 to 1/);
    bad({ model: 'bloom', heads: 2, attentionMask: [[1, 1, 1]] }, 'RangeError', /attentionMask must be \[batch, keyLength\] = \[1, 4\]/);
    bad({ model: 'bloom', heads: 2, attentionMask: [[1, 1, 1, 1]], batch: 2 }, 'RangeError', /batch 2 disagrees with attentionMask's dims \[1,4\]/);
    bad({ model: 'bloom', heads: 2, dtype: 'float64' }, 'RangeError', /dtype must be one of 'float32', 'float16', 'bfloat16'/);
    bad({ model: 'bloom', heads: 2 }, 'RangeError', /keyLength must be an integer from 1 to 16777216/, 0);
    bad({ model: 'bloom', heads: 2, mode: 'causal' }, 'TypeError', /unknown option 'mode'/);
  });
});
