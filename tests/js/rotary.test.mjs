// pe.rotary, pe.alibiSlopes, pe.alibiBias and pe.encode2d against the golden fixtures
// (tests/fixtures/{rotary,alibi,sincos2d}), in both builds of both entries (posenc and the lighter
// posenc/encoding); argument errors; dispose.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fixtureDir, loadEncodingPackage, loadPackage } from './helpers.mjs';

const ENTRIES = [
  ['posenc', await loadPackage()],
  ['posenc/encoding', await loadEncodingPackage()],
];
const RUNS = ENTRIES.flatMap(([entry, { init }]) => [true, false].map((simd) => [entry, init, simd]));
const load = (name) => JSON.parse(readFileSync(join(fixtureDir, name), 'utf8'));
const HF = [
  'llama-2-7b', 'llama-3.1-8b', 'qwen2-7b', 'qwen2.5-7b-instruct-yarn', 'gpt-oss-20b-yarn',
  'yarn-mscale-synthetic', 'mistral-7b-v0.1', 'mistral-nemo', 'gpt-neox-20b', 'gpt-j-6b',
  'phi-3-mini-128k-instruct', 'llama-2-7b-dynamic', 'vicuna-7b-v1.5-16k-linear',
];
const BOUND = 2 ** -22;
const value = (v) => (v === '-Infinity' ? -Infinity : v);

function maxDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

for (const [entry, init, simd] of RUNS) {
  describe(`rotary, ALiBi, 2D (${entry}, ${simd ? 'SIMD' : 'baseline'} build)`, async () => {
    const pe = await init({ simd });

    for (const id of HF) {
      test(`rotary config ${id}: inv_freq bit for bit, attention scaling, cos/sin tables`, () => {
        const f = load(`rotary/hf-${id}.json`);
        const rot = pe.rotary({ config: f.config });
        try {
          assert.equal(rot.headDim, f.resolved.headDim);
          assert.equal(rot.rotaryDim, f.resolved.rotaryDim);
          assert.equal(rot.layout, f.resolved.layout);
          assert.equal(rot.scaling, f.resolved.ropeType);
          assert.ok(Math.abs(rot.attentionScaling - f.attentionScaling) <= 1e-15 * f.attentionScaling);
          const first = f.invFreq.default ?? f.invFreq.short ?? f.invFreq.seqLen4096;
          assert.deepEqual(Array.from(rot.inverseFrequencies), first.values.map(Math.fround));
          // Every set the fixture records, at its sequence length (null: the short set).
          for (const [name, set] of Object.entries(f.invFreq)) {
            const got = rot.inverseFrequenciesFor(set.seqLen ?? 1);
            assert.deepEqual(Array.from(got), set.values.map(Math.fround), `${id} ${name}`);
          }
          for (const t of f.tables) {
            const { cos, sin } = rot.cosSin(t.positions.length, { positions: t.positions });
            assert.ok(maxDiff(cos, t.cos) <= BOUND, `${t.invFreq} cos`);
            assert.ok(maxDiff(sin, t.sin) <= BOUND, `${t.invFreq} sin`);
          }
        } finally {
          rot.dispose();
        }
      });
    }

    test('rotary presets: each is its fixture config, keys as written, same rotary bit for bit', () => {
      const fixtureOf = {
        'llama-2-7b': 'llama-2-7b', 'llama-3.1-8b': 'llama-3.1-8b', 'mistral-7b-v0.1': 'mistral-7b-v0.1',
        'mistral-nemo-2407': 'mistral-nemo', 'qwen2-7b': 'qwen2-7b', 'qwen2.5-7b-instruct-yarn': 'qwen2.5-7b-instruct-yarn',
        'phi-3-mini-128k-instruct': 'phi-3-mini-128k-instruct', 'gpt-oss-20b': 'gpt-oss-20b-yarn',
        'vicuna-7b-v1.5-16k': 'vicuna-7b-v1.5-16k-linear', 'gpt-neox-20b': 'gpt-neox-20b', 'gpt-j-6b': 'gpt-j-6b',
      };
      assert.deepEqual(Object.keys(pe.rotaryPresets).sort(), Object.keys(fixtureOf).sort());
      assert.ok(Object.isFrozen(pe.rotaryPresets) && Object.isFrozen(pe.rotaryPresets['llama-3.1-8b'].rope_scaling));
      for (const [name, id] of Object.entries(fixtureOf)) {
        const f = load(`rotary/hf-${id}.json`);
        const preset = pe.rotaryPresets[name];
        // Every key of the preset is the config's own value (nothing invented or rounded).
        for (const [key, v] of Object.entries(preset)) assert.deepEqual(v, f.config[key], `${name}.${key}`);
        const rot = pe.rotary({ preset: name });
        const full = pe.rotary({ config: f.config });
        try {
          for (const key of ['headDim', 'rotaryDim', 'layout', 'scaling', 'attentionScaling']) {
            assert.equal(rot[key], full[key], `${name} ${key}`);
          }
          assert.equal(rot.layout, f.resolved.layout);
          assert.deepEqual(rot.inverseFrequencies, full.inverseFrequencies);
          for (const set of Object.values(f.invFreq)) {
            assert.deepEqual(Array.from(rot.inverseFrequenciesFor(set.seqLen ?? 1)), set.values.map(Math.fround), name);
          }
        } finally {
          rot.dispose();
          full.dispose();
        }
      }
      // Options beside a preset override it, as beside config.
      const half = pe.rotary({ preset: 'gpt-j-6b', layout: 'half', rotaryDim: 32 });
      try {
        assert.equal(half.layout, 'half');
        assert.equal(half.rotaryDim, 32);
      } finally {
        half.dispose();
      }
    });

    test('rotary explicit options: float64 frequencies and tables', () => {
      for (const c of load('rotary/explicit.json').cases) {
        const rot = pe.rotary(c.options);
        const { cos, sin } = rot.cosSin(c.positions.length, { positions: c.positions });
        assert.ok(maxDiff(rot.inverseFrequencies, c.invFreq) <= 1e-15, c.id);
        assert.ok(maxDiff(cos, c.cos) <= BOUND && maxDiff(sin, c.sin) <= BOUND, c.id);
        rot.dispose();
      }
    });

    test('rotary apply: every fixture case within 2^-22 x A x |pair|', () => {
      for (const c of load('rotary/apply.json').cases) {
        const options = c.source.config ? { config: load(`rotary/hf-${c.source.config}.json`).config } : c.source.options;
        const rot = pe.rotary(options);
        const x = Float32Array.from(c.x);
        const y = rot.apply(x, { heads: c.numHeads, positions: c.positions });
        assert.equal(y, x);
        const n = c.rotaryDim / 2;
        for (let row = 0; row < c.length * c.numHeads; row++) {
          const b = row * c.headDim;
          for (let i = 0; i < n; i++) {
            const [i0, i1] = c.layout === 'half' ? [b + i, b + i + n] : [b + 2 * i, b + 2 * i + 1];
            const norm = Math.hypot(c.x[i0], c.x[i1]);
            assert.ok(Math.abs(x[i0] - c.expected[i0]) <= BOUND * c.attentionScaling * norm, `${c.id} row ${row} pair ${i}`);
            assert.ok(Math.abs(x[i1] - c.expected[i1]) <= BOUND * c.attentionScaling * norm, `${c.id} row ${row} pair ${i}`);
          }
          for (let k = c.rotaryDim; k < c.headDim; k++) assert.equal(x[b + k], Math.fround(c.expected[b + k]));
        }
        rot.dispose();
      }
    });

    test('rotary cosSin: an offset (block path) equals explicit positions (row path) bit for bit', () => {
      // offset rows are written a block of 32 positions at a time straight into the layout;
      // explicit positions row by row: the same bits at any offset below 2^24, both layouts,
      // partial rotary, odd pair counts, attention scaling, chunked calls (length 600 x 128 > one
      // scratch chunk).
      let seed = 5;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
      const specs = [
        { headDim: 128 },
        { headDim: 64, layout: 'interleaved' },
        { headDim: 96, rotaryDim: 32, base: 500000 },
        { headDim: 12, rotaryDim: 10, layout: 'interleaved' },
        { headDim: 10, rotaryDim: 6 },
        { headDim: 128, scaling: { type: 'yarn', factor: 4, originalMaxPositions: 2 ** 25 } },
      ];
      for (const spec of specs) {
        const rot = pe.rotary(spec);
        for (const [length, offset] of [[600, 0], [1, 31], [45, 33], [600, Math.floor(random() * (2 ** 24 - 600))], [77, 2 ** 24 - 77]]) {
          const positions = Array.from({ length }, (_, r) => offset + r);
          const a = rot.cosSin(length, { offset });
          const b = rot.cosSin(length, { positions });
          const bits = (v) => new Uint32Array(v.buffer, v.byteOffset, v.length);
          assert.deepStrictEqual(bits(a.cos), bits(b.cos), `${JSON.stringify(spec)} offset ${offset}`);
          assert.deepStrictEqual(bits(a.sin), bits(b.sin), `${JSON.stringify(spec)} offset ${offset}`);
        }
        rot.dispose();
      }
    });

    test('rotary apply: chunks and one row at a time give the same bits; offset', () => {
      const rot = pe.rotary({ headDim: 128, base: 500000 });
      const L = 100;
      const H = 8;
      const x = new Float32Array(L * H * 128).map((_, i) => Math.sin(i * 0.37));
      const bulk = rot.apply(x.slice(), { heads: H, offset: 4000 });
      const rows = x.slice();
      for (let r = 0; r < L; r++) rot.apply(rows.subarray(r * H * 128, (r + 1) * H * 128), { heads: H, offset: 4000 + r });
      assert.deepEqual(rows, bulk);
      rot.dispose();
    });

    test('ALiBi slopes and biases', () => {
      for (const c of load('alibi/slopes.json').cases) {
        const m = pe.alibiSlopes(c.numHeads);
        assert.ok(m instanceof Float64Array);
        for (let i = 0; i < m.length; i++) assert.ok(Math.abs(m[i] - c.slopes[i]) <= 1e-15 * c.slopes[i], `${c.numHeads}`);
      }
      for (const c of load('alibi/bias.json').cases) {
        const out = pe.alibiBias(c.numHeads, c.queryLength, c.keyLength, { mode: c.mode, offset: c.offset });
        for (let i = 0; i < out.length; i++) {
          const w = value(c.bias[i]);
          assert.ok(out[i] === w || Math.abs(out[i] - w) <= Math.abs(w) * 2 ** -23, `${c.mode} ${i}`);
        }
      }
    });

    test('2D sin-cos: MAE and timm', () => {
      for (const c of load('sincos2d/mae.json').cases) {
        const out = pe.encode2d(c.height, c.width, c.embedDim, { clsToken: c.clsToken });
        assert.ok(maxDiff(out, c.expected) <= BOUND);
      }
      for (const c of load('sincos2d/timm.json').cases) {
        const out = pe.encode2d(c.height, c.width, c.dim, {
          preset: 'timm', base: c.options.temperature, reverseCoord: c.options.reverseCoord, interleaveSinCos: c.options.interleaveSinCos,
        });
        // The fixtures use timm's float32 bands, as posenc does, and exact angles: every value is
        // the float32 nearest to the expected one (within half a float32 spacing of it).
        for (let i = 0; i < out.length; i++) {
          const w = c.expected[i];
          const halfUlp = w === 0 ? 2 ** -150 : 2 ** (Math.floor(Math.log2(Math.abs(w))) - 24);
          assert.ok(Math.abs(out[i] - w) <= halfUlp * (1 + 2 ** -20), `timm ${c.height}x${c.width}x${c.dim} [${i}]: ${out[i]} vs ${w}`);
        }
      }
    });

    test('bad arguments name themselves', () => {
      assert.throws(() => pe.rotary({}), /posenc\.rotary: headDim must be/);
      assert.throws(() => pe.rotary({ headDim: 7 }), /headDim must be even when rotaryDim is not given/);
      assert.throws(() => pe.rotary({ headDim: 64, base: 1 }), /posenc\.rotary: base must be a finite number greater than 1/);
      assert.throws(() => pe.rotary({ headDim: 64, layout: 'zigzag' }), /layout must be one of 'half', 'interleaved'/);
      assert.throws(() => pe.rotary({ headDim: 64, scaling: { type: 'yarn', factor: 0.5, originalMaxPositions: 4096 } }), /scaling\.factor must be a number from 1 to 1e6/);
      assert.throws(
        () => pe.rotary({ config: { hidden_size: 4096, num_attention_heads: 32, rope_scaling: { type: 'linear', factor: 0.5 } } }),
        /posenc\.rotary: config\.rope_scaling\.factor must be a number from 1 to 1e6, got 0\.5/,
      );
      assert.throws(() => pe.rotary({ config: 5 }), TypeError);
      assert.throws(() => pe.rotary({ headDim: 64, colour: 1 }), /unknown option 'colour'/);
      const rot = pe.rotary({ headDim: 8 });
      assert.throws(() => rot.apply(new Float32Array(12), { heads: 1 }), /x must hold length \* heads \* headDim/);
      assert.throws(() => rot.apply(new Float32Array(16), { heads: 1, positions: [0, NaN] }), /positions\[1\] must be a finite number/);
      assert.throws(() => rot.cosSin(0), /length must be/);
      rot.dispose();
      assert.throws(() => rot.apply(new Float32Array(8)), /disposed/);
      assert.throws(() => pe.alibiSlopes(0), /alibiSlopes: heads must be/);
      assert.throws(() => pe.alibiBias(2, 3, 4, { mode: 'future' }), /mode must be one of 'causal', 'symmetric'/);
      assert.throws(() => pe.encode2d(4, 4, 18), /encode2d: dim must be a multiple of 4/);
      assert.throws(() => pe.encode2d(4, 4, 16, { preset: 'mae', reverseCoord: true }), /reverseCoord is a timm option/);
    });
  });
}
