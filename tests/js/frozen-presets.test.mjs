// Issue 22: the framework presets keep the float64 frequencies posenc 0.2 used (only the paper's
// formula took its real frequencies), so their tables are 0.2's, bit for bit. The fixture holds
// tables that the frozen build of commit 215c43f computed (tests/fixtures/frozen_presets/, written
// by gen_frozen_presets.mjs): every framework preset at positions near 2^24 (where a frequency's
// last bit moves values), presets with options overridden, odd dims and explicit positions; both
// builds and both entries must return the same bits.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { fixtureDir, loadEncodingPackage, loadPackage } from './helpers.mjs';

const fixture = JSON.parse(readFileSync(join(fixtureDir, 'frozen_presets', 'frozen_presets.json'), 'utf8'));

const entries = [
  ['posenc', await loadPackage()],
  ['posenc/encoding', await loadEncodingPackage()],
];

for (const [entry, { init }] of entries) {
  for (const simd of [true, false]) {
    describe(`framework presets equal posenc 0.2 (${entry}, ${simd ? 'SIMD' : 'baseline'})`, async () => {
      const pe = await init({ simd });
      for (const { length, dim, options, bits } of fixture.cases) {
        test(`${JSON.stringify(options).slice(0, 80)} ${length} x ${dim}`, () => {
          const want = new Uint32Array(new Uint8Array(inflateSync(Buffer.from(bits, 'base64'))).buffer);
          const got = new Uint32Array(pe.encode(length, dim, options).buffer);
          assert.equal(got.length, want.length);
          let differ = 0;
          for (let k = 0; k < got.length; k++) differ += got[k] !== want[k];
          assert.equal(differ, 0, `${differ} of ${got.length} values differ from posenc 0.2`);
        });
      }
    });
  }
}
