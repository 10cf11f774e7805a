// posenc/relative's relativeBias in float16 and bfloat16 (issue 25) against PyTorch: the fixture
// (tests/fixtures/relative/relative_half.json, made by gen_relative_half.py) holds torch 1.13's
// compute_bias gathered in float32 and then .to(torch.float16) / .to(torch.bfloat16), as bits.
// Nothing here computes an expected value: every bit pattern is torch's. One case's table holds
// 16-bit rounding midpoints (both ways to even), their float32 neighbours, subnormals, the
// overflow edges, signed zeros, infinities and NaNs.
//
// NaN: torch 1.13 writes a NaN as 0xffff in bfloat16 and keeps its sign in float16 (0xfe00); posenc
// writes the quiet NaN 0x7e00 / 0x7fc0 (a JavaScript NaN read from a Float32Array has no sign to
// keep). Where torch's value is a NaN the test asks for a NaN of the format; every other value must
// be the same bits.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { fixtureDir, root } from './helpers.mjs';

const packageDir = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const { relativeBias } = await import(pathToFileURL(join(packageDir, 'relative.js')).href);
const fixture = JSON.parse(readFileSync(join(fixtureDir, 'relative', 'relative_half.json'), 'utf8'));

const FORMATS = {
  float16: { isNaN: (b) => (b & 0x7c00) === 0x7c00 && (b & 0x03ff) !== 0 },
  bfloat16: { isNaN: (b) => (b & 0x7f80) === 0x7f80 && (b & 0x007f) !== 0 },
};

/** The 16-bit bits of a relativeBias result (a Float16Array where the engine has one, else bits). */
const bitsOf = (result) => {
  if (result instanceof Uint16Array) return result;
  assert.equal(result.constructor.name, 'Float16Array');
  return new Uint16Array(result.buffer, result.byteOffset, result.length);
};

function sameAsTorch(got, want, dtype, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let nans = 0;
  for (let i = 0; i < want.length; i++) {
    if (FORMATS[dtype].isNaN(want[i])) {
      nans++;
      if (!FORMATS[dtype].isNaN(got[i])) assert.fail(`${what}: element ${i} is 0x${got[i].toString(16)}, torch has a NaN (0x${want[i].toString(16)})`);
    } else if (got[i] !== want[i]) {
      assert.fail(`${what}: element ${i} is 0x${got[i].toString(16)}, torch 0x${want[i].toString(16)}`);
    }
  }
  return nans;
}

const optionsOf = (c) => ({ numBuckets: c.numBuckets, maxDistance: c.maxDistance, bidirectional: c.bidirectional, offset: c.offset });
const tableOf = (c) => new Float32Array(Uint32Array.from(c.tableBits).buffer);

describe('relativeBias dtype float16 / bfloat16: the same bits as torch .to(dtype)', () => {
  test('the fixture: torch 1.13, 5 cases, one of midpoints and special values', () => {
    assert.equal(fixture.cases.length, 5);
    assert.match(fixture.torch, /^1\.13/);
    const ties = fixture.cases.find((c) => c.id === 'ties');
    // The ties table really holds midpoints that torch rounded both ways (checked on torch's own
    // bits, not recomputed): 1 + 2^-11 -> 1.0 (0x3c00, even), 1 + 3 * 2^-11 -> 0x3c02.
    const table = tableOf(ties);
    assert.equal(table[0], 1 + 2 ** -11);
    assert.equal(table[1], 1 + 3 * 2 ** -11);
  });

  for (const c of fixture.cases) {
    for (const dtype of ['float16', 'bfloat16']) {
      test(`${c.id}: [${c.heads}, ${c.queryLength}, ${c.keyLength}] ${dtype}`, () => {
        const table = tableOf(c);
        const got = relativeBias(table, c.heads, c.queryLength, c.keyLength, { ...optionsOf(c), dtype });
        if (dtype === 'bfloat16') assert.ok(got instanceof Uint16Array);
        const nans = sameAsTorch(bitsOf(got), c[dtype], dtype, `${c.id} ${dtype}`);
        // The ties case has NaNs in its table (two of them land in the grid); the others none.
        if (c.id === 'ties') assert.ok(nans > 0, 'the NaN entries were gathered');
        else assert.equal(nans, 0);
      });
    }
  }

  test("as: 'tensor' gives type 'float16' / 'bfloat16', dims [1, heads, q, k]; out receives the bits", () => {
    const c = fixture.cases.find((x) => x.id === 'ties');
    const table = tableOf(c);
    for (const dtype of ['float16', 'bfloat16']) {
      const t = relativeBias(table, c.heads, c.queryLength, c.keyLength, { ...optionsOf(c), dtype, as: 'tensor' });
      assert.equal(t.type, dtype);
      assert.deepEqual(t.dims, [1, c.heads, c.queryLength, c.keyLength]);
      sameAsTorch(bitsOf(t.data), c[dtype], dtype, `tensor ${dtype}`);
      const out = new Uint16Array(c[dtype].length);
      assert.equal(relativeBias(table, c.heads, c.queryLength, c.keyLength, { ...optionsOf(c), dtype, out }), out);
      sameAsTorch(out, c[dtype], dtype, `out ${dtype}`);
    }
  });

  test('a table given as a tensor { data, dims: [numBuckets, heads] } gives the same bits', () => {
    const c = fixture.cases[0];
    const data = tableOf(c);
    const got = relativeBias({ data, dims: [c.numBuckets, c.heads] }, c.heads, c.queryLength, c.keyLength, { ...optionsOf(c), dtype: 'bfloat16' });
    sameAsTorch(got, c.bfloat16, 'bfloat16', 'tensor table');
  });
});
