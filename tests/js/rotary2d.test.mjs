// rotary2d (posenc/multimodal) on both builds against tests/fixtures/vision_rope/ (ports of Hugging
// Face's Qwen2-VL / Qwen2.5-VL VisionRotaryEmbedding, rot_pos_emb, get_window_index and Pixtral's
// PixtralRotaryEmbedding run on torch 1.13): HF's float32 frequencies bit for bit, the patches'
// positions in HF's order (merge blocks, Qwen2.5-VL's windows, Pixtral's row-major grid), cos / sin
// within one float32 ulp of the exact angle's (posenc forms the angle in float64; HF in float32),
// and the rotation of the fixtures' queries within 1e-6 of the float64 rotation.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { fixtureDir, lcgValues, loadEncodingPackage, loadPackage, root } from './helpers.mjs';

const { init } = await loadPackage();
const encodingEntry = await loadEncodingPackage();
const packageDir = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const { rotary2d, ROTARY2D_MODELS } = await import(pathToFileURL(join(packageDir, 'multimodal.js')).href);
const load = (name) => JSON.parse(readFileSync(join(fixtureDir, 'vision_rope', `${name}.json`), 'utf8'));
const QWEN = [load('qwen2_vl'), load('qwen2_5_vl')];
const PIXTRAL = load('pixtral');
const builds = [['SIMD', await init()], ['baseline', await init({ simd: false })]];

/** Largest difference in float32 ulps (of the expected value's binade, at least 2^-24). */
function maxUlps(actual, expected) {
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = Math.fround(expected[i]);
    const ulp = 2 ** Math.max(Math.floor(Math.log2(Math.abs(e) || 2 ** -24)) - 23, -24 - 23);
    worst = Math.max(worst, Math.abs(actual[i] - e) / ulp);
  }
  return worst;
}

function checkRotation(r, rotation, grid) {
  const count = rotation.xCount;
  const x = Float32Array.from(lcgValues(rotation.seed, count, 1.0));
  assert.deepEqual([...x.slice(0, 4)], rotation.xFirst.map(Math.fround));
  const y = r.apply(x, { heads: rotation.heads, ...grid });
  assert.equal(y, x);
  let worst = 0;
  for (let i = 0; i < count; i++) worst = Math.max(worst, Math.abs(x[i] - rotation.expected[i]));
  assert.ok(worst <= 1e-6, `rotation differs by ${worst}`);
}

for (const [label, pe] of builds) {
  describe(`rotary2d, ${label} build`, () => {
    for (const d of QWEN) {
      const model = d.modelType;
      test(`${model}: config, frequencies, positions, cos / sin, rotation`, () => {
        // The Hub's vision_config has no model_type: the top level's, or the model option, says it.
        assert.throws(() => rotary2d(pe, { config: d.config }), { name: 'TypeError', message: /model must be one of/ });
        const r = rotary2d(pe, { config: { ...d.config, model_type: model } });
        assert.equal(r.model, model);
        assert.equal(r.headDim, d.resolved.headDim);
        assert.equal(r.spatialMergeSize, d.resolved.spatialMergeSize);
        const inv = r.inverseFrequencies;
        const bits = new Uint32Array(Float32Array.from(inv).buffer);
        const want = d.invFreq.bits;
        assert.deepEqual([...bits], [...want, ...want]);
        assert.ok(inv.every((v) => Math.fround(v) === v));
        const order = model === 'qwen2_5_vl' ? 'window' : 'patch';
        for (const c of d.cases) {
          const { h, w } = r.positions({ gridThw: c.gridThw, order });
          assert.deepEqual([...h], c.hPositions, `${c.id} h`);
          assert.deepEqual([...w], c.wPositions, `${c.id} w`);
          const { cos, sin } = r.cosSin({ gridThw: c.gridThw, order });
          assert.equal(cos.length, c.patches * r.headDim);
          // every row from the per-coordinate tables: columns k < q turn by h, q..2q by w
          const q = r.headDim / 4;
          for (let p = 0; p < c.patches; p += 3) {
            for (let k = 0; k < q; k += 3) {
              for (const [col, coord] of [[k, c.hPositions[p]], [q + k, c.wPositions[p]]]) {
                const e = c.coordinateCos[coord * q + k];
                assert.ok(Math.abs(cos[p * r.headDim + col] - e) <= 2 ** -24 && cos[p * r.headDim + col] === cos[p * r.headDim + col + 2 * q]);
                assert.ok(Math.abs(sin[p * r.headDim + col] - c.coordinateSin[coord * q + k]) <= 2 ** -24);
              }
            }
          }
          if (c.expectedCos) {
            assert.ok(maxUlps(cos, c.expectedCos) <= 1 && maxUlps(sin, c.expectedSin) <= 1);
            checkRotation(r, c.rotation, { gridThw: c.gridThw, order });
          }
        }
        r.dispose();
        assert.equal(r.disposed, true);
      });
    }
    test("Qwen2.5-VL: patch order is Qwen2-VL's, window order differs where a side exceeds a window", () => {
      const [v2, v25] = QWEN.map((d) => rotary2d(pe, { config: d.config, model: d.modelType }));
      const grid = { gridThw: [[1, 4, 10]] };
      assert.deepEqual(v25.positions(grid), v2.positions(grid));
      assert.notDeepEqual(v25.positions({ ...grid, order: 'window' }), v25.positions(grid));
      assert.throws(() => v2.positions({ ...grid, order: 'window' }), { name: 'RangeError', message: /order 'window' is Qwen2.5-VL's/ });
      v2.dispose();
      v25.dispose();
    });
    for (const c of PIXTRAL.configs) {
      test(`pixtral ${c.id}: config, frequencies, positions, cos / sin, rotation`, () => {
        const r = rotary2d(pe, { config: c.config });
        assert.equal(r.model, 'pixtral');
        assert.equal(r.headDim, c.resolved.headDim);
        assert.equal(r.maxPatchesPerSide, c.resolved.maxPatchesPerSide);
        const bits = new Uint32Array(Float32Array.from(r.inverseFrequencies).buffer);
        const all = c.invFreq.bits;
        assert.deepEqual([...bits], [...all.filter((_, i) => i % 2 === 0), ...all.filter((_, i) => i % 2 === 1)]);
        for (const k of c.cases) {
          const grid = { height: k.heightPatches, width: k.widthPatches };
          const { h, w } = r.positions(grid);
          assert.deepEqual([...h], k.rows);
          assert.deepEqual([...w], k.cols);
          const { cos, sin } = r.cosSin(grid);
          const q = r.headDim / 4;
          if (k.expectedCos) {
            assert.ok(maxUlps(cos, k.expectedCos) <= 1 && maxUlps(sin, k.expectedSin) <= 1);
            checkRotation(r, k.rotation, grid);
          } else {
            for (let p = 0; p < k.patches; p++) {
              for (let j = 0; j < q; j++) {
                assert.ok(Math.abs(cos[p * r.headDim + j] - k.rowCos[k.rows[p] * q + j]) <= 2 ** -24);
                assert.ok(Math.abs(sin[p * r.headDim + q + j] - k.colSin[k.cols[p] * q + j]) <= 2 ** -24);
              }
            }
          }
        }
        assert.throws(() => r.cosSin({ height: c.resolved.maxPatchesPerSide + 1, width: 1 }), { name: 'RangeError', message: /height must be an integer from 1 to/ });
        r.dispose();
      });
    }
    test('explicit options and the whole config.json', async () => {
      const a = rotary2d(pe, { model: 'qwen2_vl', headDim: 80, spatialMergeSize: 2 });
      const b = rotary2d(pe, { config: { model_type: 'qwen2_vl', vision_config: QWEN[0].config.vision_config } });
      assert.deepEqual(a.cosSin({ gridThw: [[2, 4, 6]] }), b.cosSin({ gridThw: [[2, 4, 6]] }));
      const p = rotary2d(pe, { config: JSON.stringify({ model_type: 'llava', vision_config: PIXTRAL.configs[0].config.vision_config }) });
      assert.equal(p.model, 'pixtral');
      // the same rotation as the instance's rotary with vision2d
      const rot = pe.rotary({ headDim: 64, vision2d: 'pixtral' });
      assert.deepEqual(rot.mropeSection, [0, 16, 16]);
      const pos = p.positions({ height: 3, width: 5 });
      const three = [new Array(15).fill(0), [...pos.h], [...pos.w]];
      assert.deepEqual(p.cosSin({ height: 3, width: 5 }), rot.cosSin(15, { positions: three }));
      // posenc/encoding's instance gives the same bits
      const e = rotary2d(await encodingEntry.init({ simd: label === 'SIMD' }), { model: 'qwen2_vl', headDim: 80, spatialMergeSize: 2 });
      assert.deepEqual(e.cosSin({ gridThw: [[2, 4, 6]] }), a.cosSin({ gridThw: [[2, 4, 6]] }));
      for (const o of [a, b, p, rot, e]) o.dispose();
      assert.deepEqual([...ROTARY2D_MODELS], ['qwen2_vl', 'qwen2_5_vl', 'pixtral']);
    });
  });
}
