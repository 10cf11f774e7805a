// Issue 25, RoPE on the tensors users hold: rot.apply with order 'bshd' / 'bhsd', per-sequence
// offsets and positions ([batch, seq]; [3, batch, seq] for a multimodal RoPE), tensors { data, dims }
// in and out, int64 / int32 / uint32 position ids, rot.cosSin in ONNX Runtime's cache layout and into
// caller buffers. Every batched form is checked bit for bit against the one-sequence 'shd' calls it
// stands for (those are checked against PyTorch's fixtures in rotary.test.mjs), in both builds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadPackage } from './helpers.mjs';

const { init } = await loadPackage();
const QWENVL = { model_type: 'qwen2_vl', hidden_size: 128, num_attention_heads: 4, rope_scaling: { type: 'mrope', mrope_section: [4, 6, 6] } };

/** Deterministic float32 data in [-4, 4). */
function data(n, seed = 1) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32) * 8 - 4;
  }
  return out;
}

/** [b, s, h, d] <-> [b, h, s, d]. */
function swapSeqHeads(x, b, s, h, d) {
  const out = new Float32Array(x.length);
  for (let i = 0; i < b; i++) {
    for (let j = 0; j < s; j++) {
      for (let k = 0; k < h; k++) out.set(x.subarray(((i * s + j) * h + k) * d, ((i * s + j) * h + k + 1) * d), ((i * h + k) * s + j) * d);
    }
  }
  return out;
}

/** What the batched call stands for: one 'shd' call per sequence, with that sequence's options. */
function perSequence(rot, x, batch, heads, optionsOf) {
  const out = x.slice();
  const block = out.length / batch;
  for (let b = 0; b < batch; b++) rot.apply(out.subarray(b * block, (b + 1) * block), { heads, ...optionsOf(b) });
  return out;
}

const sameBits = (a, b) => assert.deepEqual(new Uint32Array(a.buffer, a.byteOffset, a.length), new Uint32Array(b.buffer, b.byteOffset, b.length));

for (const simd of [true, false]) {
  describe(`rotary on tensors (${simd ? 'SIMD' : 'baseline'} build)`, async () => {
    const pe = await init({ simd });
    const B = 3;
    const S = 37;
    const H = 4;

    for (const preset of ['llama-2-7b', 'gpt-j-6b']) {
      test(`${preset}: bshd and bhsd give the bits of per-sequence shd calls (offsets, positions, tensors, int64 ids)`, () => {
        const rot = pe.rotary({ preset });
        try {
          const D = rot.headDim;
          const x = data(B * S * H * D);
          const offsets = [0, 5, 4000];
          const ids = Array.from({ length: B }, (_, b) => Array.from({ length: S }, (_, i) => (i * (b + 2) + 7 * b) % 5000));
          const cases = [
            [{ offset: 9 }, () => ({ offset: 9 })],
            [{ offset: offsets }, (b) => ({ offset: offsets[b] })],
            [{ offset: new BigInt64Array(offsets.map(BigInt)) }, (b) => ({ offset: offsets[b] })],
            [{ positions: ids }, (b) => ({ positions: ids[b] })],
            [{ positions: { data: BigInt64Array.from(ids.flat(), BigInt), dims: [B, S] } }, (b) => ({ positions: ids[b] })],
            [{ positions: Int32Array.from(ids.flat()) }, (b) => ({ positions: ids[b] })],
            [{ positions: Uint32Array.from(ids[1]) }, () => ({ positions: ids[1] })],
          ];
          for (const [options, optionsOf] of cases) {
            const expected = perSequence(rot, x, B, H, optionsOf);
            sameBits(rot.apply(x.slice(), { order: 'bshd', batch: B, heads: H, ...options }), expected);
            const t = { data: x.slice(), dims: [B, S, H, D] };
            const out = rot.apply(t, { order: 'bshd', as: 'tensor', ...options });
            assert.equal(out.data, t.data);
            assert.deepEqual(out.dims, [B, S, H, D]);
            sameBits(out.data, expected);
            const bhsd = rot.apply({ data: swapSeqHeads(x, B, S, H, D), dims: [B, H, S, D] }, { order: 'bhsd', heads: H, as: 'tensor', ...options });
            sameBits(swapSeqHeads(bhsd.data, B, H, S, D), expected);
          }
          // position_ids [1, seq] as an Array of one row: that row.
          const row = ids[2];
          sameBits(rot.apply(x.slice(0, S * H * D), { heads: H, positions: [row] }), rot.apply(x.slice(0, S * H * D), { heads: H, positions: row }));
          // shd given as a tensor, and one sequence of bshd, are today's call.
          const one = x.subarray(0, S * H * D);
          const expected = rot.apply(one.slice(), { heads: H, offset: 3 });
          sameBits(rot.apply({ data: one.slice(), dims: [S, H, D] }, { offset: 3 }).data, expected);
          sameBits(rot.apply(one.slice(), { order: 'bshd', heads: H, offset: 3 }), expected);
        } finally {
          rot.dispose();
        }
      });
    }

    test("bhsd in chunks (sequences longer than the 256 KB scratch): the core's heads-major rows give the bits of shd", () => {
      // 300 rows x 4 heads x 128 (and QWENVL's 32): several chunks per sequence, each head's slab
      // copied in and out; offsets, explicit positions, three multimodal rows.
      for (const [name, options] of [['llama-2-7b', { preset: 'llama-2-7b' }], ['gpt-j-6b', { preset: 'gpt-j-6b' }], ['qwen2-vl', { config: QWENVL }]]) {
        const rot = pe.rotary(options);
        try {
          const [Bl, Sl, Hl, D] = [2, 300, name === 'qwen2-vl' ? 16 : 4, rot.headDim];
          const x = data(Bl * Sl * Hl * D, 3);
          const plain = (b) => Array.from({ length: Sl }, (_, i) => (i * 7 + 13 * b) % 4099);
          const mm = (b) => [0, 1, 2].map((k) => Array.from({ length: Sl }, (_, i) => (i * (k + 1) + 5 * b) % 900));
          const cases = name === 'qwen2-vl'
            ? [[(b) => ({ positions: mm(b) })]]
            : [[(b) => ({ offset: [3, 5000][b] })], [(b) => ({ positions: plain(b) })]];
          for (const [optionsOf] of cases) {
            const expected = perSequence(rot, x, Bl, Hl, optionsOf);
            const t = swapSeqHeads(x, Bl, Sl, Hl, D);
            for (let b = 0; b < Bl; b++) {
              const block = t.subarray(b * Sl * Hl * D, (b + 1) * Sl * Hl * D);
              rot.apply(block, { order: 'bhsd', heads: Hl, ...optionsOf(b) });
            }
            sameBits(swapSeqHeads(t, Bl, Hl, Sl, D), expected);
          }
        } finally {
          rot.dispose();
        }
      }
    });

    test('multimodal RoPE: positions [3, batch, seq] as Hugging Face holds them', () => {
      const rot = pe.rotary({ config: QWENVL });
      try {
        const D = rot.headDim;
        const x = data(B * S * H * D, 7);
        const rows = (b) => [0, 1, 2].map((k) => Array.from({ length: S }, (_, i) => (i * (k + 1) + 11 * b) % 300));
        const ids = new BigInt64Array(3 * B * S);
        for (let k = 0; k < 3; k++) for (let b = 0; b < B; b++) for (let i = 0; i < S; i++) ids[(k * B + b) * S + i] = BigInt(rows(b)[k][i]);
        const expected = perSequence(rot, x, B, H, (b) => ({ positions: rows(b) }));
        sameBits(rot.apply(x.slice(), { order: 'bshd', batch: B, heads: H, positions: { data: ids, dims: [3, B, S] } }), expected);
        sameBits(rot.apply(x.slice(), { order: 'bshd', batch: B, heads: H, positions: ids }), expected);
        const { cos, sin } = rot.cosSin(S, { positions: { data: ids, dims: [3, B, S] }, as: 'tensor' });
        assert.deepEqual(cos.dims, [B, S, D]);
        assert.equal(sin.type, 'float32');
        for (let b = 0; b < B; b++) {
          const t = rot.cosSin(S, { positions: rows(b) });
          sameBits(cos.data.subarray(b * S * D, (b + 1) * S * D), t.cos);
          sameBits(sin.data.subarray(b * S * D, (b + 1) * S * D), t.sin);
        }
      } finally {
        rot.dispose();
      }
    });

    test("cosSin: cache 'ort' is one value per frequency, out fills the caller's arrays, per-sequence batches", () => {
      for (const preset of ['llama-2-7b', 'gpt-j-6b']) {
        const rot = pe.rotary({ preset });
        try {
          const R = rot.rotaryDim;
          const hf = rot.cosSin(S, { offset: 2 });
          const ort = rot.cosSin(S, { offset: 2, cache: 'ort' });
          assert.equal(ort.cos.length, (S * R) / 2);
          const step = rot.layout === 'interleaved' ? 2 : 1;
          for (let r = 0; r < S; r++) {
            for (let j = 0; j < R / 2; j++) {
              assert.equal(ort.cos[r * (R / 2) + j], hf.cos[r * R + j * step]);
              assert.equal(ort.sin[r * (R / 2) + j], hf.sin[r * R + j * step]);
              // The HF row holds each frequency twice: the ORT cache loses nothing.
              const twin = step === 2 ? r * R + 2 * j + 1 : r * R + j + R / 2;
              assert.equal(hf.cos[twin], hf.cos[r * R + j * step]);
            }
          }
          const out = { cos: new Float32Array(B * S * (R / 2)), sin: new Float32Array(B * S * (R / 2)) };
          const got = rot.cosSin(S, { offset: [0, 2, 9], cache: 'ort', out });
          assert.equal(got.cos, out.cos);
          assert.equal(got.sin, out.sin);
          sameBits(out.cos.subarray(S * (R / 2), 2 * S * (R / 2)), ort.cos);
          sameBits(out.sin.subarray(S * (R / 2), 2 * S * (R / 2)), ort.sin);
          const t = rot.cosSin(S, { positions: { data: new BigInt64Array(S).map((_, i) => BigInt(i + 2)), dims: [1, S] }, as: 'tensor' });
          assert.deepEqual(t.cos.dims, [1, S, R]);
          sameBits(t.cos.data, hf.cos);
          assert.deepEqual(rot.cosSin(S, { as: 'tensor' }).sin.dims, [S, R]);
        } finally {
          rot.dispose();
        }
      }
    });

    test('integer ids: BigInt64Array, Int32Array, Uint32Array positions, checked without wrapping', () => {
      const rot = pe.rotary({ headDim: 8 });
      try {
        const plain = rot.cosSin(3, { positions: [0, 7, 2 ** 31 - 1] });
        for (const ids of [new BigInt64Array([0n, 7n, 2n ** 31n - 1n]), new Uint32Array([0, 7, 2 ** 31 - 1]), new Int32Array([0, 7, 2 ** 31 - 1])]) {
          sameBits(rot.cosSin(3, { positions: ids }).cos, plain.cos);
        }
        assert.throws(() => rot.cosSin(2, { positions: new BigInt64Array([0n, 2n ** 32n]) }), /positions\[1\] must be a finite number from 0 to 2\^31 - 1, got the BigInt 4294967296n/);
        assert.throws(() => rot.cosSin(2, { positions: new BigInt64Array([0n, -1n]) }), RangeError);
        assert.throws(() => rot.cosSin(2, { positions: new Uint32Array([0, 2 ** 32 - 1]) }), RangeError);
        assert.throws(() => rot.cosSin(2, { positions: new Int32Array([0, -1]) }), RangeError);
      } finally {
        rot.dispose();
      }
    });

    test('bad tensors and shapes', () => {
      const rot = pe.rotary({ headDim: 8 });
      try {
        const gpu = { dims: [1, 2, 1, 8], location: 'gpu-buffer', get data() { throw new Error('read .data'); } };
        assert.throws(() => rot.apply(gpu, { order: 'bshd' }), { name: 'TypeError', message: /x must be a tensor on the CPU, got one at location the string "gpu-buffer"/ });
        const x = { data: new Float32Array(32), dims: [2, 2, 1, 8] };
        assert.throws(() => rot.apply(x, { order: 'bshd', heads: 2 }), /heads must agree with x.dims \(1\), got 2/);
        assert.throws(() => rot.apply(x, { order: 'bshd', batch: 1 }), /batch must agree with x.dims \(2\), got 1/);
        assert.throws(() => rot.apply(x, {}), /x.dims must be shd = \[s,h,d\] with d = 8, got \[2,2,1,8\]/);
        assert.throws(() => rot.apply({ data: new Float64Array(32), dims: [2, 2, 1, 8] }, { order: 'bshd' }), /x.data must be a Float32Array/);
        assert.throws(() => rot.apply(new Float32Array(32), { order: 'bshd', heads: 1, batch: 3 }), /a positive multiple of 24/);
        assert.throws(() => rot.apply(new Float32Array(32), { heads: 1, batch: 2 }), /batch goes with order 'bshd' or 'bhsd'/);
        assert.throws(() => rot.apply(x, { order: 'bshd', offset: [1] }), /offset must have 2 entries \(one per sequence\), got 1/);
        assert.throws(() => rot.apply(x, { order: 'bshd', positions: [[0, 1], [0, 1], [0, 1]] }), /positions must be \[seq\] or \[batch, seq\] = \[2, 2\], got 6 entries/);
        assert.throws(() => rot.apply(x, { order: 'sbhd', heads: 1 }), /order must be one of 'shd', 'bshd', 'bhsd'/);
        assert.throws(() => rot.cosSin(2, { cache: 'trt' }), /cache must be one of 'hf', 'ort'/);
        assert.throws(() => rot.cosSin(2, { out: { cos: new Float32Array(16), sin: new Float32Array(8) } }), /out.sin.length must be batch \* length \* 8 = 16, got 8/);
      } finally {
        rot.dispose();
      }
    });
  });
}
