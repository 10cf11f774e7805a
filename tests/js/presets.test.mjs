// Every preset and option against the golden fixtures, in both builds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BOUND, caseOptions, loadPackage, maxAbsDiff, presetFixtures } from './helpers.mjs';

const { init } = await loadPackage();
const fixtures = presetFixtures();

for (const simd of [true, false]) {
  describe(`presets against the fixtures (${simd ? 'SIMD' : 'baseline'} build)`, async () => {
    const pe = await init({ simd });
    test('the build asked for runs', () => assert.equal(pe.simd, simd));
    test('every preset has a fixture file', () => {
      assert.deepEqual(
        fixtures.map((f) => f.preset).sort(),
        pe.presets.map((p) => p.name).sort(),
      );
    });
    for (const fixture of fixtures) {
      const info = pe.presets.find((p) => p.name === fixture.preset);
      test(`${fixture.preset}: facts match`, () => {
        assert.equal(info.layout, fixture.facts.layout);
        assert.equal(info.frequencies, fixture.facts.frequencies);
        assert.equal(info.odd, fixture.facts.odd);
        assert.equal(info.minDim, fixture.facts.minDim ?? 1);
        // The paper's real frequencies for vaswani only; the frameworks keep their float64 ones.
        assert.equal(info.exactFrequencies, fixture.preset === 'vaswani');
      });
      for (const c of fixture.cases) {
        test(`${fixture.preset}: ${c.name}`, () => {
          const options = caseOptions(fixture.preset, c);
          if (c.dim < info.minDim) {
            assert.throws(() => pe.encode(c.length, c.dim, options), RangeError);
            return;
          }
          const got = pe.encode(c.length, c.dim, options);
          assert.equal(got.length, c.length * c.dim);
          assert.ok(maxAbsDiff(got, c.expected) <= BOUND, `max diff ${maxAbsDiff(got, c.expected)}`);
          if (c.framework) {
            assert.ok(maxAbsDiff(got, c.framework) <= c.frameworkMaxAbsDiff + BOUND);
          }
          // The same case through a reusable encoder.
          const { preset, base, minTimescale, ...rows } = options;
          const spec = { dim: c.dim, preset };
          if (base !== undefined) spec.base = base;
          if (minTimescale !== undefined) spec.minTimescale = minTimescale;
          const enc = pe.encoder(spec);
          try {
            assert.deepEqual(enc.encode(c.length, rows), got);
          } finally {
            enc.dispose();
          }
        });
      }
    }
  });
}
