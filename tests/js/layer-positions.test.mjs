// The layer's position step through the JavaScript API: every rotary and ALiBi fixture of
// tests/fixtures/layer (PyTorch, gen_layer.py with positional_layer.py), on the SIMD and the
// baseline build: output within 4e-6 and attention within 1e-6 of PyTorch's, as the C++ suite
// checks the core.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { layerInput } from '../fixtures/layer/lcg.mjs';
import { fixtureDir, layerState, loadPackage, maxAbsDiff } from './helpers.mjs';

const { init } = await loadPackage();
const dir = join(fixtureDir, 'layer');
const fixtures = readdirSync(dir)
  .filter((f) => /^(rotary|alibi)-.*\.json$/.test(f))
  .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));

test('there are rotary and ALiBi fixtures', () => {
  assert.ok(fixtures.some((f) => f.position.method === 'rotary'));
  assert.ok(fixtures.some((f) => f.position.method === 'alibi'));
});

for (const simd of [true, false]) {
  describe(simd ? 'SIMD build' : 'baseline build', async () => {
    const pe = await init({ simd });
    for (const f of fixtures) {
      test(f.name, () => {
        const { method, ...params } = f.position;
        const layer = pe.encoderLayer({
          config: { ...f.config, position: method, ...params },
          weights: layerState(f.seed, f.config.dModel, f.config.ffDim),
        });
        const options = { causal: f.causal };
        if (f.keyPaddingMask) options.keyPaddingMask = f.keyPaddingMask;
        if (f.positionOffset !== null) options.positionOffset = f.positionOffset;
        if (f.positions) options.positions = f.positions;
        const out = layer.forward(layerInput(f.seed, f.length, f.config.dModel), options);
        assert.ok(maxAbsDiff(out, f.expected) <= 4e-6, `output ${maxAbsDiff(out, f.expected)}`);
        const att = layer.attention();
        assert.ok(maxAbsDiff(att, f.attention) <= 1e-6, `attention ${maxAbsDiff(att, f.attention)}`);
        assert.equal(layer.config.position, method);
        layer.dispose();
      });
    }
  });
}
