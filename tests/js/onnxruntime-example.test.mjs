// examples/onnxruntime/ (issue 25) end to end: the example's own code (decoder-block-core.mjs,
// rope-index-core.mjs, float16.mjs) runs the graphs of tests/fixtures/onnxruntime/ in
// onnxruntime-web (wasm) with posenc's RoPE caches, masks, ALiBi biases and ropeIndex's position
// ids, and is checked against PyTorch (gen_decoder_block.py):
//
// - float32 graph: every output within 1e-5 of PyTorch float32.
// - float16 graph: every output value o within bound_o + 1e-5 of PyTorch float32, where bound_o
//   (decoder_block.json, float16Bound) is the first-order bound of float16 storage: each input,
//   weight and operator output rounded once to float16 (relative error u = 2^-11, float16's 11
//   significant bits, plus 2^-25 absolute for subnormals), carried to o through |d o / d v| at the
//   float32 reference; a decoding step adds the bound of the past it is fed (the float16 graph's own
//   present_key / present_value). The measured maxima are printed beside the bounds.
// - the float32 -> float16 rounding the example uses (round to nearest, ties to even) on every
//   float16 value, every midpoint and their neighbours.
// - the same page (examples/onnxruntime/index.html) in Debian's Chromium, with POSENC_EXAMPLE_BROWSER=1.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { fixtureDir, loadPackage, root } from './helpers.mjs';
import {
  FLOAT16_MASK,
  createSessions,
  maxAbsDiff,
  runBlock,
  runCases,
  summarize,
  valuesOf,
} from '../../examples/onnxruntime/decoder-block-core.mjs';
import { float16Bits, float16Value, fromFloat16, toFloat16Bits } from '../../examples/onnxruntime/float16.mjs';
import { runRopeIndex } from '../../examples/onnxruntime/rope-index-core.mjs';

const dir = join(fixtureDir, 'onnxruntime');
const fixture = JSON.parse(readFileSync(join(dir, 'decoder_block.json'), 'utf8'));
const mrope = JSON.parse(readFileSync(join(dir, 'mrope_qwen2vl.json'), 'utf8'));
const FLOAT32_TOLERANCE = 1e-5;

let ort = null;
try {
  ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
} catch {
  ort = null;
}
const noOrt = ort ? false : 'onnxruntime-web is not installed (npm ci)';

const dist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const built = existsSync(join(dist, 'multimodal.js'));
const { init } = built ? await loadPackage() : { init: null };
const multimodal = built ? await import(pathToFileURL(join(dist, 'multimodal.js')).href) : null;
const noPosenc = noOrt || (built ? false : `${dist} is not built`);

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const fromBits32 = (bits) => ((u32[0] = bits), f32[0]);
const bits32 = (v) => ((f32[0] = v), u32[0]);

describe('float32 -> float16 rounding of the example (float16.mjs)', () => {
  test('edge cases', () => {
    const cases = [
      [0, 0x0000], [-0, 0x8000], [1, 0x3c00], [-2, 0xc000], [65504, 0x7bff], [-65504, 0xfbff],
      [65519.99609375, 0x7bff], // the float32 just below 65520: still the largest finite
      [65520, 0x7c00], // 65504 + half an ulp: a tie, to the even neighbour, which is infinity
      [1e9, 0x7c00], [-1e9, 0xfc00], [Infinity, 0x7c00], [-Infinity, 0xfc00],
      [2 ** -14, 0x0400], // smallest normal
      [2 ** -14 - 2 ** -25, 0x0400], // largest subnormal + half a step: tie, to even (0x400)
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -25, 0x0000], // half of it: tie, to even (0)
      [fromBits32(bits32(2 ** -25) + 1), 0x0001], // just above half
      [3 * 2 ** -25, 0x0002], // 1.5 steps: tie, to even (2)
      [5 * 2 ** -25, 0x0002], // 2.5 steps: tie, to even (2)
      [2 ** -26, 0x0000], [-(2 ** -26), 0x8000], [1e-30, 0x0000],
      [1 + 2 ** -11, 0x3c00], // tie between 1 and 1 + 2^-10: to even (1)
      [1 + 3 * 2 ** -11, 0x3c02], // tie between 1 + 2^-10 and 1 + 2^-9: to even (0x3c02)
      [fromBits32(bits32(1 + 2 ** -11) + 1), 0x3c01],
      [2046.5, 0x67fe], [2047.5, 0x6800], [2048.5, 0x6800], [4097, 0x6c00], [4098, 0x6c00], [4102, 0x6c02], // ties to even
      // a number is rounded to float32 first: 1 + 2^-11 + 2^-30 becomes the tie 1 + 2^-11 -> 1
      [1 + 2 ** -11 + 2 ** -30, 0x3c00],
    ];
    for (const [value, want] of cases) {
      assert.equal(float16Bits(value), want, `float16Bits(${value}) = 0x${float16Bits(value).toString(16)}`);
    }
    const nan = float16Bits(NaN);
    assert.ok((nan & 0x7c00) === 0x7c00 && (nan & 0x3ff) !== 0, 'NaN stays NaN');
    assert.ok(Number.isNaN(float16Value(nan)));
    assert.equal(float16Value(0x7bff), 65504);
    assert.equal(float16Value(0x0001), 2 ** -24);
    assert.ok(Object.is(float16Value(0x8000), -0));
  });

  test('every float16 value round-trips; every midpoint ties to even; its float32 neighbours go to the nearer', () => {
    for (let h = 0; h < 0x10000; h++) {
      const v = float16Value(h);
      if (Number.isNaN(v)) continue;
      assert.equal(float16Bits(v), h);
    }
    for (const sign of [0, 0x8000]) {
      for (let h = 0; h < 0x7c00; h++) {
        const lo = float16Value(sign | h);
        const hi = float16Value(sign | (h + 1)); // 0x7c00: infinity, whose "value" for rounding is 2^16
        const mid = (lo + (h + 1 === 0x7c00 ? Math.sign(hi) * 65536 : hi)) / 2; // exact in float32
        assert.equal(Math.fround(mid), mid);
        const even = (h & 1) === 0 ? sign | h : sign | (h + 1);
        assert.equal(float16Bits(mid), even, `midpoint after 0x${(sign | h).toString(16)}`);
        const toward = (m, d) => fromBits32(bits32(m) + d); // one float32 step away from 0 (d = 1) or toward it
        assert.equal(float16Bits(toward(mid, -1)), sign | h);
        assert.equal(float16Bits(toward(mid, 1)), sign | (h + 1));
      }
    }
  });

  test('arrays: -Infinity replaced on request; Uint16Array bits and Float16Array-style numbers read back', () => {
    const bits = toFloat16Bits(Float32Array.of(-Infinity, 0.1, -0.5), { replaceNegativeInfinity: FLOAT16_MASK });
    assert.deepEqual(Array.from(bits), [0xfbff, 0x2e66, 0xb800]);
    assert.deepEqual(Array.from(toFloat16Bits([-Infinity])), [0xfc00]);
    assert.deepEqual(Array.from(fromFloat16(bits)), [-65504, Math.fround(0.0999755859375), -0.5]);
    assert.deepEqual(Array.from(fromFloat16([1.5, -2])), [1.5, -2]); // a Float16Array's numbers
  });
});

let nodeResults = null; // runCases in Node, for the Chromium test to compare with

describe('decoder block in onnxruntime-web with posenc inputs (examples/onnxruntime/decoder-block-core.mjs)', { skip: noPosenc }, () => {
  let pe;
  let sessions;
  let results;

  before(async () => {
    pe = await init();
    sessions = await createSessions(ort, {
      float32: readFileSync(join(dir, fixture.files.float32)),
      float16: readFileSync(join(dir, fixture.files.float16)),
    });
    results = await runCases(ort, pe, sessions, fixture);
    nodeResults = results;
  });

  after(async () => {
    await sessions?.float32.release();
    await sessions?.float16.release();
  });

  test('the graphs take what the README says', () => {
    for (const [dtype, type] of [['float32', 'float32'], ['float16', 'float16']]) {
      const meta = Object.fromEntries(sessions[dtype].inputMetadata.map((m) => [m.name, m]));
      assert.deepEqual(Object.keys(meta), ['x', 'cos_cache', 'sin_cache', 'attn_bias', 'past_key', 'past_value']);
      for (const m of Object.values(meta)) assert.equal(m.type, type);
      assert.deepEqual(meta.cos_cache.shape, ['seq', 16]);
      assert.deepEqual(meta.attn_bias.shape, [1, 'bias_heads', 'seq', 'total']);
      assert.deepEqual(meta.past_key.shape, [1, 4, 'past', 16]);
    }
  });

  test("posenc's caches and biases are the ones PyTorch used", () => {
    for (const r of results) {
      // cosSin is the correctly rounded float32; the fixture rounds float64's cos/sin: 1 ulp apart at most
      assert.ok(r.inputs.cos <= 2 ** -24 && r.inputs.sin <= 2 ** -24, `${r.name}: cos ${r.inputs.cos}, sin ${r.inputs.sin}`);
      assert.equal(r.inputs.bias, 0, `${r.name}: bias (mask positions and ALiBi values)`);
      assert.ok(r.inputs.biasDims, `${r.name}: bias dims`);
    }
  });

  test('float32 graph: every output within 1e-5 of PyTorch float32', () => {
    for (const r of results) {
      const s = summarize(r);
      console.log(`  ${r.name}: float32 max |ORT - PyTorch| ${s.float32.toExponential(2)}`);
      assert.equal(r.float32.type, 'float32');
      for (const k of ['y', 'presentKey', 'presentValue']) {
        const d = maxAbsDiff(r.float32[k], r.expected[k]);
        assert.ok(d <= FLOAT32_TOLERANCE, `${r.name} ${k}: ${d}`);
      }
    }
  });

  test('float16 graph: every output within its float16 bound (+ 1e-5) of PyTorch float32', () => {
    for (const r of results) {
      const s = summarize(r);
      const yMax = Math.max(...r.expected.y.map(Math.abs));
      const ulp = 2 ** (Math.floor(Math.log2(yMax)) - 10); // float16's spacing at the output's largest value
      console.log(
        `  ${r.name}: float16 max |ORT - PyTorch| ${s.float16.toExponential(2)} (${(s.float16 / ulp).toFixed(2)} float16 ulps ` +
          `at |y| max ${yMax.toFixed(2)}); largest bound ${s.float16Bound.toExponential(2)} (${(s.float16Bound / ulp).toFixed(1)} ulps); ` +
          `worst |diff| / (bound + 1e-5) ${s.float16Ratio.toFixed(3)}`,
      );
      assert.equal(r.float16.type, 'float16');
      assert.deepEqual(r.float16.dims.y, [1, r.expected.y.length / 64, 64]);
      assert.ok(s.float16Ratio <= 1, `${r.name}: an output is outside its bound (ratio ${s.float16Ratio})`);
    }
  });

  test('why -65504: a fully masked row is finite with it, NaN with -Infinity or -1e9 in float16', async () => {
    const q = 2;
    const x = new Float32Array(q * 64).fill(0.5);
    const cos = new Float32Array(q * 16).fill(1);
    const sin = new Float32Array(q * 16);
    const bias = (m) => Float32Array.of(m, m, m, 0); // query 0 may attend to nothing
    const biasDims = [1, 1, q, q];
    for (const dtype of ['float32', 'float16']) {
      const finite = valuesOf((await runBlock(ort, sessions[dtype], dtype, { x, cos, sin, bias: bias(FLOAT16_MASK), biasDims })).y);
      assert.ok(finite.every(Number.isFinite), `${dtype}: -65504`);
    }
    // -Infinity straight into the float16 graph (the example replaces it with -65504)
    const t = (d, dims) => new ort.Tensor('float16', Uint16Array.from(d, float16Bits), dims);
    const empty = new ort.Tensor('float16', new Uint16Array(0), [1, 4, 0, 16]);
    const out = await sessions.float16.run({
      x: t(x, [1, q, 64]), cos_cache: t(cos, [q, 16]), sin_cache: t(sin, [q, 16]),
      attn_bias: t(bias(-Infinity), biasDims), past_key: empty, past_value: empty,
    });
    const y = valuesOf(out.y);
    assert.ok(y.subarray(0, 64).every(Number.isNaN), 'the masked row is NaN');
    assert.ok(y.subarray(64).every(Number.isFinite), 'the other row is not');
    // -1e9, a common float32 mask value, is -Infinity in float16
    assert.equal(float16Bits(-1e9), 0xfc00);
    const big = valuesOf((await runBlock(ort, sessions.float16, 'float16', { x, cos, sin, bias: bias(-1e9), biasDims })).y);
    assert.ok(big.subarray(0, 64).every(Number.isNaN), '-1e9 in float16: NaN too');
  });
});

describe('ropeIndex -> ort.Tensor int64 [3, batch, seq] -> a Qwen2-VL rotary graph (examples/onnxruntime/rope-index-core.mjs)', { skip: noPosenc }, () => {
  test('no copy, HF position ids, cos/sin as PyTorch and as posenc', async () => {
    const pe = await init();
    const session = await ort.InferenceSession.create(readFileSync(join(dir, 'mrope_qwen2vl.onnx')), { executionProviders: ['wasm'] });
    try {
      const r = await runRopeIndex(ort, multimodal.ropeIndex, pe, session, mrope);
      assert.equal(r.positionIds.copied, false, 'new ort.Tensor(type, data, dims) keeps ropeIndex\'s array');
      assert.ok(r.positionIds.data instanceof BigInt64Array);
      assert.equal(r.positionIds.type, 'int64');
      assert.deepEqual(r.positionIds.dims, mrope.expected.positionIdsDims);
      assert.deepEqual(Array.from(r.positionIds.data, Number), mrope.expected.positionIds);
      assert.deepEqual(Array.from(r.ropeDeltas.data, Number), mrope.expected.ropeDeltas);
      assert.deepEqual(r.ropeDeltas.dims, [2, 1]);
      const input = r.graphInputs.find((m) => m.name === 'position_ids');
      assert.equal(input.type, 'int64');
      assert.deepEqual(input.shape, [3, 'batch', 'seq']);
      assert.deepEqual(r.cos.dims, mrope.expected.cosSinDims);
      // graph and PyTorch compute the same float32 angle; their cos/sin kernels may differ by an ulp or two
      const vsTorch = Math.max(maxAbsDiff(r.cos.data, mrope.expected.cos), maxAbsDiff(r.sin.data, mrope.expected.sin));
      // posenc forms the angle in float64: the graph's float32 angle p * w (w <= 1) is off by up to
      // 2^-24 p, the kernels by a few ulps: 2^-24 * max position + 2^-22
      const maxPosition = Math.max(...mrope.expected.positionIds);
      const vsPosenc = Math.max(maxAbsDiff(r.cos.data, r.posenc.cos), maxAbsDiff(r.sin.data, r.posenc.sin));
      console.log(`  max |graph - PyTorch| ${vsTorch.toExponential(2)}; max |graph - posenc| ${vsPosenc.toExponential(2)} ` +
        `(bound ${(2 ** -24 * maxPosition + 2 ** -22).toExponential(2)})`);
      assert.ok(vsTorch <= 2 ** -22, `vs PyTorch ${vsTorch}`);
      assert.ok(vsPosenc <= 2 ** -24 * maxPosition + 2 ** -22, `vs posenc ${vsPosenc}`);
    } finally {
      await session.release();
    }
  });
});

// Chromium is opt-in here (tests/js/ runs without a browser; the page takes 3 to 10 s on this
// 2-core machine): POSENC_EXAMPLE_BROWSER=1 node --test tests/js/onnxruntime-example.test.mjs
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const noBrowser =
  (process.env.POSENC_EXAMPLE_BROWSER !== '1' && 'opt-in: POSENC_EXAMPLE_BROWSER=1') ||
  noPosenc ||
  (!existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}`) ||
  (process.env.POSENC_PACKAGE_DIR && 'the page imports this repository\'s dist/') ||
  (!existsSync(join(root, 'dist', 'browser.js')) && 'dist/browser.js is not built');

describe('the same examples in Chromium (examples/onnxruntime/index.html)', { skip: noBrowser }, () => {
  test('the page reaches the same numbers', async () => {
    const { launchChromium, serveStatic } = await import('../browser/launch.mjs');
    const server = await serveStatic(root);
    const browser = await launchChromium();
    const problems = [];
    try {
      const page = await browser.newPage();
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
      const started = performance.now();
      await page.goto(`${server.url}examples/onnxruntime/index.html`);
      await page.waitForFunction(() => window.exampleResults !== undefined, null, { timeout: 60_000 });
      const r = await page.evaluate(() => window.exampleResults);
      console.log(`  the page ran in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      assert.equal(r.error, undefined, r.error);
      assert.deepEqual(problems, []);
      const node = nodeResults;
      assert.ok(node, 'the Node suite ran first');
      for (const [i, c] of r.decoder.entries()) {
        assert.ok(c.float32 <= FLOAT32_TOLERANCE, `${c.name}: float32 ${c.float32}`);
        assert.ok(c.float16Ratio <= 1, `${c.name}: float16 ratio ${c.float16Ratio}`);
        const d32 = maxAbsDiff(c.y32, node[i].float32.y);
        const d16 = maxAbsDiff(c.y16, node[i].float16.y);
        console.log(`  ${c.name}: Chromium float32 ${c.float32.toExponential(2)}, float16 ${c.float16.toExponential(2)}; ` +
          `|Chromium - Node| y: float32 ${d32.toExponential(2)}, float16 ${d16.toExponential(2)}`);
        assert.ok(d32 <= FLOAT32_TOLERANCE && d16 <= 2 * c.float16Bound);
      }
      const ri = r.ropeIndex;
      assert.equal(ri.positionIds.copied, false);
      assert.deepEqual(ri.positions, mrope.expected.positionIds);
      assert.ok(Math.max(ri.cosVsPyTorch, ri.sinVsPyTorch) <= 2 ** -22);
      console.log(`  Chromium: Float16Array ${r.float16Array ? 'present' : 'absent'}, float16 outputs as ${r.decoder[0].outputType}`);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});
