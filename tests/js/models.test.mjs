// pe.rotary({ config, layer }) against the per-model fixtures (tests/fixtures/rotary/models:
// PyTorch ports of each family's Hugging Face modeling file), both builds of both entries: every
// decoder layer's RoPE or null, the model and layer types, the softmax factor, HF's float32
// frequencies bit for bit, cos/sin tables (multimodal three-row positions too) and a rotation;
// pe.rotaryModelTypes; refusals (unknown model type, a layer missing or out of range).
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { modelTable, withTable } from '../../scripts/model-types-doc.mjs';
import { fixtureDir, loadEncodingPackage, loadPackage, root } from './helpers.mjs';

const ENTRIES = [
  ['posenc', await loadPackage()],
  ['posenc/encoding', await loadEncodingPackage()],
];
const dir = join(fixtureDir, 'rotary', 'models');
const FIXTURES = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));

function maxDiff(a, b) {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

function checkRope(rot, r, label) {
  assert.equal(rot.headDim, r.headDim, label);
  assert.equal(rot.rotaryDim, r.rotaryDim, label);
  assert.equal(rot.layout, r.layout, label);
  assert.ok(Math.abs(rot.softmaxScaleFactor - r.softmaxScaleFactor) < 1e-12, label);
  assert.deepEqual(rot.mropeSection, r.mrope === null ? null : r.mrope.section, label);
  assert.equal(rot.mropeInterleaved, r.mrope !== null && r.mrope.interleaved, label);
  const bits = new Uint32Array(Float32Array.from(rot.inverseFrequencies).buffer);
  assert.deepEqual([...bits], r.invFreq.bits, `${label} inv_freq bits`);
  const tol = 2 ** -22 * Math.max(1, r.attentionScaling);
  for (const t of r.tables) {
    const { cos, sin } = rot.cosSin(Array.isArray(t.positions[0]) ? t.positions[0].length : t.positions.length,
      { positions: t.positions });
    assert.ok(maxDiff(cos, t.cos) <= tol && maxDiff(sin, t.sin) <= tol, `${label} cos/sin`);
  }
  const x = Float32Array.from(r.apply.x);
  rot.apply(x, { heads: r.apply.heads, positions: r.apply.positions });
  assert.ok(maxDiff(x, r.apply.y) <= 1.5 * tol, `${label} apply`);
  // The flat form of three rows: one typed array of 3 * L.
  if (r.mrope !== null) {
    const p = r.apply.positions;
    const flat = Float64Array.from([...p[0], ...p[1], ...p[2]]);
    const y = Float32Array.from(r.apply.x);
    rot.apply(y, { heads: r.apply.heads, positions: flat });
    assert.deepEqual(y, x, `${label} flat positions`);
  }
}

for (const [entry, { init }] of ENTRIES) {
  for (const simd of [true, false]) {
    describe(`${entry} ${simd ? 'SIMD' : 'baseline'}: model rules`, async () => {
      const pe = await init({ simd });
      for (const f of FIXTURES) {
        test(`${f.id} (${f.modelType}): every layer as the model's code computes it`, () => {
          const seen = new Set();
          let differ = false;
          f.layers.forEach((l, layer) => {
            if (l.rope !== f.layers[0].rope) differ = true;
            const rot = pe.rotary({ config: f.config, layer });
            if (l.rope === null) {
              assert.equal(rot, null, `${f.id} layer ${layer} has no RoPE`);
              return;
            }
            assert.ok(rot !== null, `${f.id} layer ${layer} has RoPE`);
            assert.equal(rot.modelType, f.modelType);
            assert.equal(rot.layerType, l.layerType);
            if (!seen.has(l.rope)) {
              seen.add(l.rope);
              checkRope(rot, f.ropes[l.rope], `${f.id} layer ${layer}`);
            }
            rot.dispose();
          });
          if (differ) {
            assert.throws(() => pe.rotary({ config: f.config }), (e) => e instanceof RangeError && /layer must be given/.test(e.message));
          } else if (f.layers[0].rope !== null) {
            pe.rotary({ config: f.config }).dispose();
          }
          assert.ok(pe.rotaryModelTypes.some((t) => t.modelType === f.modelType), f.modelType);
        });
        test(`${f.id}: attention masks and query scales as the model's masking code builds them`, () => {
          for (const m of f.masks ?? []) {
            const kind = f.layers[m.layer].attention.kind;
            const mask = pe.attentionMask(f.config, { layer: m.layer, queryLength: m.queryLength, keyLength: m.keyLength, offset: m.offset });
            assert.equal(mask.length, m.queryLength * m.keyLength);
            assert.equal([...mask].join(''), m.mask, `${f.id} layer ${m.layer} (${kind}) offset ${m.offset}`);
          }
          for (const q of f.queryScales ?? []) {
            const values = pe.queryScales(f.config, { layer: q.layer, length: q.length, offset: q.offset });
            assert.deepEqual([...values], q.values.map(Math.fround), `${f.id} layer ${q.layer} offset ${q.offset}`);
          }
          f.layers.forEach((l, layer) => {
            const scales = pe.queryScales(f.config, { layer, length: 2 });
            assert.equal(scales === null, !l.queryScale, `${f.id} layer ${layer} query temperature`);
          });
        });
      }
      test('an unknown model_type is refused unless modelRule says llama; a config without one is Llama', () => {
        const config = { model_type: 'not_a_model', hidden_size: 64, num_attention_heads: 2 };
        assert.throws(() => pe.rotary({ config }), (e) => e instanceof RangeError && /'not_a_model' is not a model type posenc reads/.test(e.message) && /pe.rotaryModelTypes/.test(e.message));
        const rot = pe.rotary({ config, modelRule: 'llama' });
        assert.equal(rot.modelType, 'llama');
        assert.equal(rot.headDim, 32);
        rot.dispose();
        const plain = pe.rotary({ config: { hidden_size: 64, num_attention_heads: 2 } });
        assert.equal(plain.modelType, 'llama');
        plain.dispose();
        assert.throws(() => pe.rotary({ config, modelRule: 'gpt2' }), RangeError);
        assert.throws(() => pe.rotary({ headDim: 8, layer: 0 }), TypeError);
        const f = FIXTURES.find((x) => x.id === 'gemma-3-1b-it');
        assert.throws(() => pe.rotary({ config: f.config, layer: f.layers.length }), (e) => e instanceof RangeError && /layer must be an integer from 0 to/.test(e.message));
        assert.throws(() => pe.rotary({ config: f.config, layer: 1.5 }), RangeError);
        // The instance keeps working.
        pe.rotary({ config: f.config, layer: 0 }).dispose();
      });
      test('three position rows only for a multimodal RoPE; rows of different lengths refused', () => {
        const rot = pe.rotary({ headDim: 8 });
        assert.throws(() => rot.cosSin(2, { positions: [[0, 1], [0, 1], [0, 1]] }), (e) => e instanceof RangeError && /three rows/.test(e.message));
        rot.dispose();
        const f = FIXTURES.find((x) => x.ropes.some((r) => r.mrope !== null));
        const m = pe.rotary({ config: f.config, layer: f.layers.findIndex((l) => l.rope !== null) });
        assert.throws(() => m.cosSin(2, { positions: [[0, 1], [0], [0, 1]] }), RangeError);
        // t = h = w: plain positions give the same as three equal rows.
        const a = m.cosSin(3, { positions: [[5, 6, 7], [5, 6, 7], [5, 6, 7]] });
        const b = m.cosSin(3, { offset: 5 });
        assert.deepEqual(a, b);
        m.dispose();
      });
      test('pe.rotaryModelTypes: each row names its layout and rule', () => {
        assert.ok(pe.rotaryModelTypes.length >= 50);
        for (const t of pe.rotaryModelTypes) {
          assert.ok(['half', 'interleaved', 'deinterleave'].includes(t.layout), t.modelType);
          assert.ok(t.family.length > 0 && typeof t.headDim === 'string' && typeof t.layers === 'string' && typeof t.attention === 'string', t.modelType);
          assert.ok(t.partialRotaryFactor > 0 && t.partialRotaryFactor <= 1);
        }
        assert.ok(Object.isFrozen(pe.rotaryModelTypes));
        // docs/MODELS.md shows the same table (node scripts/model-types-doc.mjs writes it).
        const doc = readFileSync(join(root, 'docs', 'MODELS.md'), 'utf8');
        assert.equal(doc, withTable(doc, modelTable(pe.rotaryModelTypes)), 'docs/MODELS.md is not current: run node scripts/model-types-doc.mjs');
      });
    });
  }
}
