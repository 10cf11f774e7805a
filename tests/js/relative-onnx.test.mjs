// T5's relative position bias as an exported Hugging Face model computes it: the ONNX graphs of
// tests/fixtures/relative/ (gen_t5_onnx.py: compute_bias and _relative_position_bucket of
// modeling_t5.py, node for node) run in onnxruntime-web (wasm, Node), against PyTorch's values in
// t5.json (bit for bit: this is what makes the graphs the benchmark's honest peer), and against
// posenc/relative (dist/relative.js, or an installed package's) on more shapes, offsets and every
// distance up to 2^20.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { fixtureDir, root } from './helpers.mjs';

const dir = join(fixtureDir, 'relative');
const t5 = JSON.parse(readFileSync(join(dir, 't5.json'), 'utf8'));

let ort = null;
try {
  ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
} catch {
  ort = null;
}
const noOrt = ort ? false : 'onnxruntime-web is not installed (npm ci)';

const dist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const relativeFile = join(dist, 'relative.js');
const relative = existsSync(relativeFile) ? await import(pathToFileURL(relativeFile).href) : null;
const noPosenc = noOrt || (relative ? false : `${relativeFile} is not built`);

// The graphs: [file, kind, bidirectional, numBuckets, maxDistance].
const GRAPHS = [
  ['t5_bias_encoder.onnx', 'bias', true, 32, 128],
  ['t5_bias_decoder.onnx', 'bias', false, 32, 128],
  ['t5_bias_encoder_16_64.onnx', 'bias', true, 16, 64],
  ['t5_buckets_encoder.onnx', 'buckets', true, 32, 128],
  ['t5_buckets_decoder.onnx', 'buckets', false, 32, 128],
];
const sessions = new Map();

function graphFor(kind, bidirectional, numBuckets, maxDistance) {
  const g = GRAPHS.find((x) => x[1] === kind && x[2] === bidirectional && x[3] === numBuckets && x[4] === maxDistance);
  return g ? sessions.get(g[0]) : undefined;
}

const scalar = (v) => new ort.Tensor('int64', BigInt64Array.of(BigInt(v)), []);

/** position_bias [1, heads, q, k] of a bias graph. */
async function runBias(session, table, heads, q, k, offset) {
  const out = await session.run({
    query_length: scalar(q),
    key_length: scalar(k),
    offset: scalar(offset),
    table: new ort.Tensor('float32', table, [table.length / heads, heads]),
  });
  const t = out.position_bias;
  assert.deepEqual(t.dims, [1, heads, q, k]);
  assert.equal(t.type, 'float32');
  return t.data;
}

/** relative_position_bucket [q, k] (int64) of a buckets graph. */
async function runBuckets(session, q, k, offset) {
  const out = await session.run({ query_length: scalar(q), key_length: scalar(k), offset: scalar(offset) });
  const t = out.relative_position_bucket;
  assert.deepEqual(t.dims, [q, k]);
  assert.equal(t.type, 'int64');
  return t.data;
}

// The buckets of one query at position 2^20 against keys 0 .. 2^21: every relative position
// -2^20 .. 2^20 (element r + 2^20), per direction, run once and shared by the tests below.
const WIDE = 2 ** 20;
const wide = new Map();
async function wideBuckets(bidirectional) {
  if (!wide.has(bidirectional)) wide.set(bidirectional, await runBuckets(graphFor('buckets', bidirectional, 32, 128), 1, 2 * WIDE + 1, WIDE));
  return wide.get(bidirectional);
}

/** Asserts the same float32 bits, naming the first difference. */
function assertSameBits(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  const a = new Uint32Array(Float32Array.from(actual).buffer);
  const e = new Uint32Array(Float32Array.from(expected).buffer);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== e[i]) assert.fail(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]}`);
  }
}

/** Asserts the same integers (Int32Array, BigInt64Array or numbers), naming the first difference. */
function assertSameIntegers(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < actual.length; i++) {
    if (BigInt(actual[i]) !== BigInt(expected[i])) assert.fail(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]}`);
  }
}

/** Deterministic float32 table [numBuckets, heads], values in [-2, 2). */
function sampleTable(numBuckets, heads, seed) {
  const t = new Float32Array(numBuckets * heads);
  let s = seed >>> 0;
  for (let i = 0; i < t.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    t[i] = ((s >>> 8) - 8388608) / 4194304;
  }
  return t;
}

describe('the T5 ONNX graphs in onnxruntime-web', { skip: noOrt }, () => {
  before(async () => {
    for (const [file] of GRAPHS) sessions.set(file, await ort.InferenceSession.create(readFileSync(join(dir, file))));
  });

  test("every bias[] case of t5.json: PyTorch's compute_bias, bit for bit", async () => {
    assert.equal(t5.bias.length, 4);
    for (const c of t5.bias) {
      const session = graphFor('bias', c.bidirectional, c.numBuckets, c.maxDistance);
      assert.ok(session, `${c.id}: a graph for ${c.numBuckets} / ${c.maxDistance}`);
      const out = await runBias(session, Float32Array.from(c.table), c.heads, c.queryLength, c.keyLength, c.offset);
      assertSameBits(out, c.expected, c.id);
    }
  });

  test("the buckets graphs on t5.json's 32 / 128 grids (encoder, decoder, decoding steps, offsets)", async () => {
    const grids = t5.grids.filter((g) => g.numBuckets === 32 && g.maxDistance === 128);
    assert.equal(grids.length, 6);
    for (const g of grids) {
      const out = await runBuckets(graphFor('buckets', g.bidirectional, 32, 128), g.queryLength, g.keyLength, g.offset);
      assertSameIntegers(out, g.buckets, g.note);
    }
  });

  test("the buckets graphs at t5.json's 32 / 128 edge positions up to |r| = 2^20", async () => {
    for (const bidirectional of [true, false]) {
      const s = t5.settings.find((x) => x.numBuckets === 32 && x.maxDistance === 128 && x.bidirectional === bidirectional);
      const out = await wideBuckets(bidirectional);
      let checked = 0;
      s.relativePositions.forEach((r, i) => {
        if (Math.abs(r) > WIDE) return;
        assert.equal(out[r + WIDE], BigInt(s.buckets[i]), `${bidirectional ? 'bidirectional' : 'causal'} r = ${r}`);
        checked++;
      });
      assert.ok(checked > 50);
    }
  });

  test('the bias graphs are the buckets graphs gathered from the table', async () => {
    const heads = 3;
    const table = sampleTable(32, heads, 7);
    for (const bidirectional of [true, false]) {
      const [q, k, offset] = [9, 300, 40];
      const bias = await runBias(graphFor('bias', bidirectional, 32, 128), table, heads, q, k, offset);
      const buckets = await runBuckets(graphFor('buckets', bidirectional, 32, 128), q, k, offset);
      for (let h = 0; h < heads; h++) {
        for (let x = 0; x < q * k; x++) assert.equal(bias[h * q * k + x], table[Number(buckets[x]) * heads + h]);
      }
    }
  });
});

describe('posenc/relative against the T5 ONNX graphs', { skip: noPosenc }, () => {
  before(async () => {
    if (sessions.size === 0) {
      for (const [file] of GRAPHS) sessions.set(file, await ort.InferenceSession.create(readFileSync(join(dir, file))));
    }
  });

  const SHAPES = [
    // [heads, q, k, offset]
    [12, 1, 1, 0],
    [12, 37, 512, 0],
    [12, 512, 37, 0],
    [8, 64, 64, 0],
    [6, 1, 512, 511],
    [6, 1, 2049, 2048],
    [4, 16, 300, 200],
    [2, 3, 10, 5000],
    [2, 200, 130, 17],
  ];

  test('relativeBias equals position_bias, bit for bit (q != k, decoding steps, offsets, both directions)', async () => {
    let seed = 1;
    for (const [file, kind, bidirectional, numBuckets, maxDistance] of GRAPHS.filter((g) => g[1] === 'bias')) {
      for (const [heads, q, k, offset] of SHAPES) {
        const table = sampleTable(numBuckets, heads, seed++);
        const graph = await runBias(sessions.get(file), table, heads, q, k, offset);
        const options = { numBuckets, maxDistance, bidirectional, offset };
        assertSameBits(relative.relativeBias(table, heads, q, k, options), graph, `${file} ${kind} [${heads}, ${q}, ${k}] offset ${offset}`);
        // the tensor form, from a { data, dims } table, into a caller's array
        const out = new Float32Array(heads * q * k);
        const t = relative.relativeBias({ data: table, dims: [numBuckets, heads] }, heads, q, k, { ...options, out, as: 'tensor' });
        assert.equal(t.data, out);
        assert.deepEqual(t.dims, [1, heads, q, k]);
        assertSameBits(out, graph, `${file} [${heads}, ${q}, ${k}] offset ${offset}, out and as: 'tensor'`);
      }
    }
  });

  test('relativeBuckets equals relative_position_bucket (int32 and int64)', async () => {
    for (const bidirectional of [true, false]) {
      const session = graphFor('buckets', bidirectional, 32, 128);
      for (const [, q, k, offset] of SHAPES) {
        const graph = await runBuckets(session, q, k, offset);
        const what = `${bidirectional ? 'encoder' : 'decoder'} ${q} x ${k} offset ${offset}`;
        assertSameIntegers(relative.relativeBuckets(q, k, { bidirectional, offset }), graph, what);
        const big = relative.relativeBuckets(q, k, { bidirectional, offset, dtype: 'int64' });
        assert.ok(big instanceof BigInt64Array);
        assert.deepEqual(big, graph, `${what}, int64`);
      }
    }
  });

  test('relativeBuckets equals the graph at every distance up to 2^20, both directions', async () => {
    for (const bidirectional of [true, false]) {
      const graph = await wideBuckets(bidirectional);
      const ours = relative.relativeBuckets(1, 2 * WIDE + 1, { bidirectional, offset: WIDE });
      assertSameIntegers(ours, graph, `${bidirectional ? 'bidirectional' : 'causal'}, r = -2^20 .. 2^20 (element r + 2^20)`);
    }
  });

  test("with a T5 config and attention, the graph of that attention's direction", async () => {
    const config = t5.configs.find((c) => c.id === 'flan-t5-small').config;
    const heads = config.num_heads;
    const table = sampleTable(32, heads, 99);
    for (const attention of ['encoder', 'decoder']) {
      const graph = await runBias(graphFor('bias', attention === 'encoder', 32, 128), table, heads, 5, 140, 3);
      assertSameBits(relative.relativeBias(table, heads, 5, 140, { config, attention, offset: 3 }), graph, attention);
    }
  });
});
