// The "Bad input" tables (docs/ERRORS.md, linked from the README) are the specification of every
// argument check: this suite reads them from docs/ERRORS.md and runs each row on the SIMD and on
// the baseline build. A row is
//   | `call` | TypeError / RangeError / Error / none | `text the message contains` |
// For each row: the call throws exactly that class (or returns normally for `none`), the message
// starts with "posenc." and contains the text; then the instance and every object the call used
// must still give bit-identical results to a fresh instance that never saw an error (a disposed
// object is replaced by a new one made by the same instance). Changing a row in the README
// changes what is tested.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';
import { layerInput, layerState } from '../fixtures/layer/lcg.mjs';
import { BOUND, fixtureDir, loadPackage, maxAbsDiff, oracleTable, root } from './helpers.mjs';

const { init, simdSupported } = await loadPackage();
// posenc/multimodal (plain JS) from the same package directory.
const packageDir = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const { ropeIndex, rotary2d } = await import(pathToFileURL(join(packageDir, 'multimodal.js')).href);
const { relativeBuckets, relativeBias, alibiModelBias } = await import(pathToFileURL(join(packageDir, 'relative.js')).href);
const QWEN = { model_type: 'qwen2_vl', image_token_id: 151655, video_token_id: 151656, vision_config: { spatial_merge_size: 2 } };
// The rotary2d and relative rows' values (README "rotary2d", "relativeBuckets, relativeBias").
const QWEN2VL = { model_type: 'qwen2_vl', vision_config: { embed_dim: 1280, num_heads: 16, spatial_merge_size: 2 } };
const T5 = { model_type: 't5', relative_attention_num_buckets: 32, relative_attention_max_distance: 128 };

// ---- the README's tables -----------------------------------------------------------------------
const HEADER = '| call | error | message contains |';
const CLASSES = { TypeError, RangeError, Error, none: null };

/** The rows of every checked table in the README's "## Bad input" section, by #### heading. */
export function readTables(markdown) {
  const start = markdown.search(/^## Bad input$/m);
  assert.ok(start >= 0, 'docs/ERRORS.md has no "## Bad input" section');
  const rest = markdown.slice(start + 1);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  const lines = section.split('\n');
  const rows = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith('#### ')) heading = lines[i].slice(5).trim();
    if (lines[i].trim() !== HEADER) continue;
    assert.match(lines[i + 1], /^\|(---\|){3}$/, `table under "${heading}": separator line`);
    for (i += 2; i < lines.length && lines[i].startsWith('|'); i++) {
      const line = lines[i].trim();
      const cells = line.slice(1, -1).split('|').map((c) => c.trim());
      assert.equal(cells.length, 3, `row must have 3 cells (no "|" inside): ${line}`);
      const [call, error, message] = cells;
      assert.match(call, /^`[^`]+`$/, `the call is one code span: ${line}`);
      assert.ok(error in CLASSES, `error must be one of ${Object.keys(CLASSES).join(', ')}: ${line}`);
      if (error === 'none') assert.equal(message, '', `a none row has no message: ${line}`);
      else assert.match(message, /^`[^`]+`$/, `the message text is one code span: ${line}`);
      rows.push({ heading, call: call.slice(1, -1), error, message: message.slice(1, -1), line });
    }
  }
  return { rows, section };
}

const readme = readFileSync(join(root, 'docs', 'ERRORS.md'), 'utf8');
const { rows, section } = readTables(readme);
const headings = [...new Set(rows.map((r) => r.heading))];

// ---- what the calls refer to -------------------------------------------------------------------
// The encoder layer of fixture post-relu-d6-pad (its PyTorch output is the reference) and the
// demo's trained tagger.
const layerFixture = JSON.parse(readFileSync(join(fixtureDir, 'layer', 'post-relu-d6-pad.json'), 'utf8'));
const CONFIG = { dModel: 6, heads: 2, ffDim: 10 };
const LAYER_INPUT = layerInput(layerFixture.seed, layerFixture.length, CONFIG.dModel);
const LAYER_OPTIONS = { keyPaddingMask: layerFixture.keyPaddingMask };
const tagger = JSON.parse(readFileSync(join(fixtureDir, 'model', 'tagger.json'), 'utf8'));
const TAGGER_BYTES = new Uint8Array(readFileSync(join(fixtureDir, 'model', 'tagger.safetensors')));
const ENCODE_ARGS = [3, 8, { offset: 5 }];
// rot = pe.rotary({ headDim: 8 }) and its input: 2 positions x 1 head x 8 floats.
const QUERIES = Float32Array.from({ length: 16 }, (_, i) => Math.fround(Math.sin(1 + 3 * i)));
const LLAMA = { hidden_size: 64, num_attention_heads: 4, rope_theta: 500000 };
// Configs of the model-rule rows (README "pe.rotary and its methods").
const GEMMA3 = { model_type: 'gemma3_text', hidden_size: 64, head_dim: 16, num_attention_heads: 4, num_hidden_layers: 6, sliding_window: 8 };
const QWENVL = { model_type: 'qwen2_vl', hidden_size: 128, num_attention_heads: 4, rope_scaling: { type: 'mrope', mrope_section: [4, 6, 6] } };
const LLAMA4 = { model_type: 'llama4_text', hidden_size: 64, head_dim: 16, num_attention_heads: 4, num_hidden_layers: 4 };

/** float64 rotate-half RoPE of QUERIES (headDim 8, base 10000) at positions `positions`. */
function rotaryOracle(positions) {
  const out = new Float64Array(QUERIES.length);
  positions.forEach((p, row) => {
    for (let i = 0; i < 4; i++) {
      const angle = p * Math.pow(10000, -i / 4);
      const x = QUERIES[row * 8 + i];
      const y = QUERIES[row * 8 + i + 4];
      out[row * 8 + i] = x * Math.cos(angle) - y * Math.sin(angle);
      out[row * 8 + i + 4] = y * Math.cos(angle) + x * Math.sin(angle);
    }
  });
  return out;
}

const weightsOf = () => layerState(layerFixture.seed, CONFIG.dModel, CONFIG.ffDim);

/** Objects a call may use: how an instance makes one, and the valid call that checks it. */
const OBJECTS = {
  rot: {
    make: (pe) => pe.rotary({ headDim: 8 }),
    check: (rot) => rot.apply(QUERIES.slice(), { heads: 1, offset: 3 }),
  },
  enc: {
    make: (pe) => pe.encoder({ dim: 8 }),
    check: (enc) => enc.encode(3, { offset: 2 }),
  },
  layer: {
    make: (pe) => pe.encoderLayer({ config: CONFIG, weights: weightsOf() }),
    check: (layer) => layer.forward(LAYER_INPUT, LAYER_OPTIONS),
  },
  manyHeads: {
    make: (pe) => pe.encoderLayer({ config: { dModel: 256, heads: 256, ffDim: 4 }, weights: layerState(3, 256, 4) }),
    check: (layer) => layer.forward(layerInput(3, 4, 256)),
  },
  model: {
    make: (pe) => pe.loadModel(TAGGER_BYTES),
    check: (model) => model.forward(tagger.cases[0].tokens),
  },
};

function detached(array) {
  structuredClone(array.buffer, { transfer: [array.buffer] });
  return array;
}
/** A copy of safetensors `bytes` with the __metadata__ keys in `changes` set (strings). */
function withMetadata(bytes, changes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  header.__metadata__ = { ...header.__metadata__, ...changes };
  const text = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + text.length + bytes.length - 8 - n);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(bytes.subarray(8 + n), 8 + text.length);
  return out;
}
const shared = (n) => new Float32Array(new SharedArrayBuffer(4 * n));
function omit(object, key) {
  const copy = { ...object };
  delete copy[key];
  return copy;
}
/** Calls f while WebAssembly.validate (the SIMD probe) says no, as on an engine without SIMD. */
function noSimd(f) {
  const validate = WebAssembly.validate;
  WebAssembly.validate = () => false;
  try {
    return f(); // init() decides the build synchronously, before its first await
  } finally {
    WebAssembly.validate = validate;
  }
}

function sameBits(actual, expected, what) {
  assert.ok(actual instanceof Float32Array, `${what}: a Float32Array`);
  assert.equal(actual.length, expected.length, `${what}: length`);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const b = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) assert.fail(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]} (bit for bit)`);
  }
}

/** Reference results of a fresh instance that never saw an error, checked against the oracles. */
async function references(simd) {
  const pe = await init({ simd });
  assert.equal(pe.simd, simd);
  const ref = { encode: pe.encode(...ENCODE_ARGS) };
  const spec = { dim: 8, layout: 'interleaved', frequencies: 'paper', odd: 'paper' };
  assert.ok(maxAbsDiff(ref.encode, oracleTable(spec, [5, 6, 7])) <= BOUND, 'encode vs float64 oracle');
  for (const [name, o] of Object.entries(OBJECTS)) {
    const object = o.make(pe);
    ref[name] = o.check(object);
    object.dispose();
  }
  assert.ok(maxAbsDiff(ref.rot, rotaryOracle([3, 4])) <= 2 * BOUND, 'rotary vs float64 oracle');
  assert.ok(maxAbsDiff(ref.enc, oracleTable(spec, [2, 3, 4])) <= BOUND, 'encoder vs float64 oracle');
  assert.ok(maxAbsDiff(ref.layer, layerFixture.expected) <= 4e-6, 'layer vs PyTorch');
  assert.ok(maxAbsDiff(ref.model, tagger.cases[0].logitsWithPE) <= 1e-5, 'model vs PyTorch');
  return ref;
}

/** Runs one row on instance pe, then checks pe and the objects the call used against ref. */
async function runRow(pe, ref, row) {
  const made = new Map();
  const disposedObjects = new Set();
  const values = {
    pe,
    init,
    simdSupported,
    config: { ...CONFIG },
    weights: weightsOf(),
    x: LAYER_INPUT.slice(),
    queries: QUERIES.slice(),
    llama: structuredClone(LLAMA),
    gemma3: structuredClone(GEMMA3),
    qwenvl: structuredClone(QWENVL),
    llama4: structuredClone(LLAMA4),
    ropeIndex,
    qwen: structuredClone(QWEN),
    rotary2d,
    qwen2vl: structuredClone(QWEN2VL),
    relativeBuckets,
    relativeBias,
    alibiModelBias,
    t5: structuredClone(T5),
    table: new Float32Array(64),
    bytes: TAGGER_BYTES.slice(),
    detached,
    withMetadata,
    shared,
    omit,
    noSimd,
    disposed: (object) => {
      object.dispose();
      disposedObjects.add(object);
      return object;
    },
  };
  for (const [name, o] of Object.entries(OBJECTS)) {
    // Only the objects the call names are made (a layer of 256 heads is not free).
    if (new RegExp(`\\b${name}\\b`).test(row.call)) made.set(name, (values[name] = o.make(pe)));
  }
  const names = [...Object.keys(values)];
  const call = new Function(...names, `'use strict'; return (${row.call});`);

  let error = null;
  let result;
  try {
    result = call(...names.map((n) => values[n]));
    if (result && typeof result.then === 'function') result = await result;
  } catch (err) {
    error = err;
  }
  try {
    if (row.error === 'none') {
      assert.equal(error, null, `expected no error, got ${error?.constructor?.name}: ${error?.message}`);
      if (result && typeof result.encode === 'function' && typeof result.simd === 'boolean') {
        // An instance: the baseline build under noSimd (noSimd(() => init())), else the SIMD build
        // (init({ threads: 1 })), and right.
        const simd = !row.call.startsWith('noSimd');
        assert.equal(result.simd, simd);
        sameBits(result.encode(...ENCODE_ARGS), (simd ? REFS.simd : REFS.baseline).encode, 'the new instance');
      }
    } else {
      assert.ok(error, `expected a ${row.error}, but the call returned ${result}`);
      assert.equal(
        error.constructor,
        CLASSES[row.error],
        `expected a ${row.error}, got ${error.constructor?.name}: ${error.message}`,
      );
      assert.ok(error.message.startsWith('posenc.'), `message names the function: ${error.message}`);
      assert.ok(error.message.includes(row.message), `message ${JSON.stringify(error.message)} lacks ${JSON.stringify(row.message)}`);
    }
    // The instance and the objects still work, bit for bit as a fresh instance.
    sameBits(pe.encode(...ENCODE_ARGS), ref.encode, 'pe.encode after the call');
    for (const [name, object] of made) {
      const o = OBJECTS[name];
      if (disposedObjects.has(object)) {
        const fresh = o.make(pe);
        sameBits(o.check(fresh), ref[name], `a new ${name} after the call`);
        fresh.dispose();
      } else {
        sameBits(o.check(object), ref[name], `${name} after the call`);
      }
    }
  } finally {
    for (const object of made.values()) object.dispose();
  }
}

// ---- the tests ---------------------------------------------------------------------------------
const REFS = { simd: await references(true), baseline: await references(false) };

test('the README has the checked tables, covering every public function and error class', () => {
  assert.ok(rows.length >= 100, `only ${rows.length} rows`);
  const calls = rows.map((r) => r.call).join('\n');
  for (const pattern of [
    /\binit\(/, /\bsimdSupported\(/, /\bpe\.encode\(/, /\bpe\.addTo\(/, /\bpe\.concat\(/, /\bpe\.shift\(/,
    /\bpe\.encoder\(/, /\benc\.encode\(/, /\benc\.addTo\(/, /\benc\.concat\(/, /\benc\.shift\(/,
    /\bpe\.encoderLayer\(/, /\blayer\.forward\(/, /\)\.attention\(\)/, /\bpe\.loadModel\(/,
    /\bmodel\.forward\(/, /\bmodel\.attention\(/, /\)\.dispose\(\)/, /\bdetached\(/, /\bshared\(/,
    /\bmanyHeads\.forward\(/, /\bpe\.rotary\(/, /\brot\.apply\(/, /\brot\.cosSin\(/, /\brot\.inverseFrequenciesFor\(/, /\bpe\.alibiSlopes\(/,
    /\bpe\.alibiBias\(/, /\bpe\.encode2d\(/,
  ]) {
    assert.match(calls, pattern, `no row calls ${pattern}`);
  }
  for (const error of Object.keys(CLASSES)) assert.ok(rows.some((r) => r.error === error), `no ${error} row`);
  const seen = new Set();
  for (const r of rows) {
    assert.ok(!seen.has(r.call), `duplicate row ${r.call}`);
    seen.add(r.call);
  }
  // The table of what each function accepts names each of them too.
  const accepts = section.slice(section.indexOf('### What each function accepts'), section.indexOf('### Every bad input'));
  for (const name of ['init(', 'simdSupported(', 'pe.presets', 'pe.encode(', 'pe.addTo(', 'pe.concat(', 'pe.shift(',
    'pe.encoder(', 'enc.encode(', 'enc.addTo(', 'enc.concat(', 'enc.shift(', 'pe.encoderLayer(', 'layer.forward(',
    'layer.attention(', 'pe.loadModel(', 'model.forward(', 'model.attention(', 'pe.rotary(', 'rot.apply(', 'rot.cosSin(', 'rot.inverseFrequenciesFor(',
    'pe.alibiSlopes(', 'pe.alibiBias(', 'pe.encode2d(', 'dispose(']) {
    assert.ok(accepts.includes(`\`${name}`), `the accepts table does not list ${name}`);
  }
});

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'baseline';
  describe(`README bad-input tables, ${build} build`, () => {
    const ref = simd ? REFS.simd : REFS.baseline;
    for (const heading of headings) {
      describe(heading, () => {
        let pe; // one instance per table: every row's errors land on it
        before(async () => {
          pe = await init({ simd });
        });
        for (const row of rows.filter((r) => r.heading === heading)) {
          test(`${row.call} -> ${row.error}`, () => runRow(pe, ref, row));
        }
      });
    }
  });
}
