// ropeIndex (bindings/js/rope_index.js): Qwen-VL M-RoPE position ids against the PyTorch port of
// HF's get_rope_index (tests/fixtures/rope_index/cases.json), every input form, the output forms,
// argument errors; and the tensor conventions of bindings/js/tensor.js. Pure JavaScript: these
// import the sources directly (no build, no wasm).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { integerOutput, readIntegers, readOutputOptions, readTensor } from '../../bindings/js/tensor.js';
import { fixtureDir, root } from './helpers.mjs';

// The shipped entry posenc/multimodal (dist/, or an installed package's).
const dist = process.env.POSENC_PACKAGE_DIR ? join(process.env.POSENC_PACKAGE_DIR, 'dist') : join(root, 'dist');
const { ropeIndex, ROPE_INDEX_MODEL_TYPES } = await import(pathToFileURL(join(dist, 'multimodal.js')).href);

const doc = JSON.parse(readFileSync(join(fixtureDir, 'rope_index', 'cases.json'), 'utf8'));
const CASES = doc.cases;
const byName = (name) => CASES.find((c) => c.name === name);

// The fixture's inputs as ropeIndex options (null / absent inputs left out).
function optionsOf(c, overrides = {}) {
  const o = {};
  for (const key of ['inputIds', 'attentionMask', 'imageGridThw', 'videoGridThw', 'secondPerGridTs']) {
    if (c.inputs[key] !== null) o[key] = c.inputs[key];
  }
  return { ...o, ...overrides };
}

// { positions: number[], deltas: number[] } of a result, whatever its form.
function plain(result) {
  const data = (x) => Array.from(x.data ?? x, Number);
  const deltas = 'ropeDelta' in result ? [result.ropeDelta] : data(result.ropeDeltas);
  return { positions: data(result.positions), deltas };
}

const expectedOf = (c) => ({ positions: c.expected.positionIds, deltas: c.expected.ropeDeltas });

function rejects(fn, ErrorType, pattern) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof ErrorType, `expected ${ErrorType.name}, got ${err.constructor.name}: ${err.message}`);
    assert.match(err.message, pattern);
    assert.match(err.message, /^posenc\.ropeIndex: /);
    return true;
  });
}

describe('ropeIndex against HF get_rope_index (cases.json)', () => {
  test('the fixture covers every model type and the listed situations', () => {
    assert.equal(doc.cases.length >= 60, true);
    for (const type of ROPE_INDEX_MODEL_TYPES) {
      const names = CASES.filter((c) => c.config.model_type === type).map((c) => c.name);
      for (const what of ['text only', 'one image', 'three images', 'one video', 'images and videos mixed', 'left padding']) {
        assert.ok(names.some((n) => n.includes(what)), `${type}: ${what}`);
      }
    }
    assert.ok(CASES.some((c) => c.name.includes('float32 truncation')));
  });

  for (const c of CASES) {
    test(c.name, () => {
      const result = ropeIndex(c.config, optionsOf(c));
      assert.deepEqual(plain(result), expectedOf(c));
      const [, B, L] = c.expected.dims;
      if (c.batched) {
        assert.ok(result.positions instanceof Int32Array);
        assert.equal(result.positions.length, 3 * B * L);
        assert.ok(result.ropeDeltas instanceof Int32Array);
        assert.equal(result.ropeDeltas.length, B);
      } else {
        assert.equal(B, 1);
        assert.ok(result.positions instanceof Int32Array);
        assert.equal(result.positions.length, 3 * L);
        assert.equal(typeof result.ropeDelta, 'number');
      }
    });
  }
});

describe('input forms give the same positions', () => {
  const single = byName('qwen2_5_vl: images and videos mixed');
  const batch = byName('qwen3_vl: batch of 3, left padding');
  const timed = byName('qwen2_5_vl: batch of 2 videos, left padding, second_per_grid_ts');

  const tensor = (data, dims) => ({ data, dims, type: 'int64', location: 'cpu' });
  const big = (xs) => BigInt64Array.from(xs.flat(), BigInt);

  test('one sequence: Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array, Float64Array, tensor', () => {
    const ids = single.inputs.inputIds;
    const want = expectedOf(single);
    for (const inputIds of [
      ids,
      Int32Array.from(ids),
      Uint32Array.from(ids),
      BigInt64Array.from(ids, BigInt),
      BigUint64Array.from(ids, BigInt),
      Float64Array.from(ids),
      ids.map(BigInt),
      tensor(BigInt64Array.from(ids, BigInt), [ids.length]),
      tensor(Int32Array.from(ids), [ids.length]),
    ]) {
      assert.deepEqual(plain(ropeIndex(single.config, optionsOf(single, { inputIds }))), want);
    }
  });

  test('grids: Arrays of triples, flat 3n integers, typed arrays, [n, 3] tensors', () => {
    const { imageGridThw: im, videoGridThw: vid } = single.inputs;
    const want = expectedOf(single);
    for (const [imageGridThw, videoGridThw] of [
      [im.flat(), vid.flat()],
      [Int32Array.from(im.flat()), BigInt64Array.from(vid.flat(), BigInt)],
      [im.map((r) => Int32Array.from(r)), vid],
      [tensor(big(im), [im.length, 3]), tensor(big(vid), [vid.length, 3])],
    ]) {
      assert.deepEqual(plain(ropeIndex(single.config, optionsOf(single, { imageGridThw, videoGridThw }))), want);
    }
  });

  test('a batch: Array of sequences (Arrays or typed arrays), [B, L] tensor; masks alike', () => {
    const { inputIds: ids, attentionMask: mask } = batch.inputs;
    const [B, L] = [ids.length, ids[0].length];
    const want = expectedOf(batch);
    for (const [inputIds, attentionMask] of [
      [ids, mask],
      [ids.map((r) => Int32Array.from(r)), mask.map((r) => Uint8Array.from(r))],
      [ids.map((r) => BigInt64Array.from(r, BigInt)), mask.map((r) => r.map(BigInt))],
      [tensor(big(ids), [B, L]), tensor(big(mask), [B, L])],
      [tensor(Int32Array.from(ids.flat()), [B, L]), mask],
    ]) {
      assert.deepEqual(plain(ropeIndex(batch.config, optionsOf(batch, { inputIds, attentionMask }))), want);
    }
  });

  test('secondPerGridTs: Array, Float32Array (the processor\'s float32), Float64Array, tensor', () => {
    const s = timed.inputs.secondPerGridTs;
    const want = expectedOf(timed);
    for (const secondPerGridTs of [s, Float32Array.from(s), Float64Array.from(s), { data: Float32Array.from(s), dims: [2] }]) {
      assert.deepEqual(plain(ropeIndex(timed.config, optionsOf(timed, { secondPerGridTs }))), want);
    }
  });

  test('a batch of one equals the single sequence; one row of a batch equals it alone (no padding)', () => {
    const c = byName('qwen2_vl: three images');
    const one = plain(ropeIndex(c.config, optionsOf(c)));
    const asBatch = plain(ropeIndex(c.config, optionsOf(c, { inputIds: [c.inputs.inputIds] })));
    assert.deepEqual(asBatch, one);
  });

  test('options are read once; the inputs are not modified', () => {
    const ids = Int32Array.from(single.inputs.inputIds);
    const copy = ids.slice();
    let reads = 0;
    const options = optionsOf(single);
    Object.defineProperty(options, 'inputIds', { enumerable: true, get: () => (reads++, ids) });
    ropeIndex(single.config, options);
    assert.equal(reads, 1);
    assert.deepEqual(ids, copy);
  });
});

describe('output forms', () => {
  const c = byName('qwen2_5_vl: batch of 2 videos, left padding, second_per_grid_ts');
  const s = byName('qwen3_vl: one video');

  test("dtype 'int64': BigInt64Array positions and deltas", () => {
    const r = ropeIndex(c.config, optionsOf(c, { dtype: 'int64' }));
    assert.ok(r.positions instanceof BigInt64Array);
    assert.ok(r.ropeDeltas instanceof BigInt64Array);
    assert.deepEqual(plain(r), expectedOf(c));
    const one = ropeIndex(s.config, optionsOf(s, { dtype: 'int64' }));
    assert.ok(one.positions instanceof BigInt64Array);
    assert.equal(typeof one.ropeDelta, 'number');
  });

  test("as: 'tensor': { data, dims, type } as HF shapes them", () => {
    const [, B, L] = c.expected.dims;
    for (const dtype of ['int32', 'int64']) {
      const r = ropeIndex(c.config, optionsOf(c, { dtype, as: 'tensor' }));
      assert.deepEqual(r.positions.dims, [3, B, L]);
      assert.deepEqual(r.ropeDeltas.dims, [B, 1]);
      assert.equal(r.positions.type, dtype);
      assert.equal(r.ropeDeltas.type, dtype);
      assert.ok(r.positions.data instanceof (dtype === 'int32' ? Int32Array : BigInt64Array));
      assert.deepEqual(plain(r), expectedOf(c));
    }
    const one = ropeIndex(s.config, optionsOf(s, { as: 'tensor' }));
    assert.deepEqual(one.positions.dims, [3, s.expected.dims[2]]);
    assert.equal(one.positions.type, 'int32');
    assert.equal(one.ropeDelta, s.expected.ropeDeltas[0]);
    assert.deepEqual(plain(ropeIndex(s.config, optionsOf(s, { as: 'array' }))), expectedOf(s));
  });

});

// The v4.x get_rope_index (Qwen2-VL; what transformers.js ports): vision inputs found from the
// token after each vision_start, text after a vision block starting at its largest position + 1,
// delta against the full length. Without padding, with images and videos of t <= max(h, w) / merge,
// the current mm_token_type_ids form gives the same; longer videos differ (see the fixture).
function legacyRopeIndex(ids, images, videos, { imageId, videoId, startId, merge }) {
  const vision = ids.filter((_, j) => j > 0 && ids[j - 1] === startId);
  let [remainImages, remainVideos] = [vision.filter((x) => x === imageId).length, vision.filter((x) => x === videoId).length];
  const t = [];
  const h = [];
  const w = [];
  const push = (a, b, c) => (t.push(a), h.push(b), w.push(c));
  const next = () => (t.length ? Math.max(...t, ...h, ...w) + 1 : 0);
  let st = 0;
  let [im, vi] = [0, 0];
  for (let n = remainImages + remainVideos; n > 0; n--) {
    const edImage = remainImages > 0 ? ids.indexOf(imageId, st) : ids.length + 1;
    const edVideo = remainVideos > 0 ? ids.indexOf(videoId, st) : ids.length + 1;
    const isImage = edImage < edVideo;
    const [gt, gh, gw] = isImage ? images[im++] : videos[vi++];
    isImage ? remainImages-- : remainVideos--;
    const ed = isImage ? edImage : edVideo;
    const s = next();
    for (let k = 0; k < ed - st; k++) push(s + k, s + k, s + k);
    const base = s + ed - st;
    for (let a = 0; a < gt; a++) for (let b = 0; b < gh / merge; b++) for (let c = 0; c < gw / merge; c++) push(base + a, base + b, base + c);
    st = ed + (gt * gh * gw) / merge / merge;
  }
  const s = next();
  for (let k = 0; k < ids.length - st; k++) push(s + k, s + k, s + k);
  return { positions: [...t, ...h, ...w], deltas: [next() - ids.length] };
}

test('agrees with the v4.x get_rope_index on random image / short-video sequences without padding', () => {
  const spec = { imageId: 151655, videoId: 151656, startId: 151652, merge: 2 };
  const config = { model_type: 'qwen2_vl', image_token_id: 151655, video_token_id: 151656, vision_config: { spatial_merge_size: 2 } };
  let state = 12345;
  const rand = (n) => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0), state % n);
  for (let trial = 0; trial < 200; trial++) {
    const ids = [];
    const images = [];
    const videos = [];
    for (let part = rand(4); part >= 0; part--) {
      for (let k = rand(4); k > 0; k--) ids.push(100 + rand(1000));
      const grid = [1, 2 * (1 + rand(4)), 2 * (1 + rand(4))];
      const video = rand(2) === 1;
      if (video) grid[0] = 1 + rand(Math.max(grid[1], grid[2]) / 2);
      (video ? videos : images).push(grid);
      ids.push(151652, ...new Array((grid[0] * grid[1] * grid[2]) / 4).fill(video ? 151656 : 151655), 151653);
    }
    const options = { inputIds: ids, imageGridThw: images, videoGridThw: videos };
    assert.deepEqual(plain(ropeIndex(config, options)), legacyRopeIndex(ids, images, videos, spec), `trial ${trial}`);
  }
});

describe('text-only path (no grids)', () => {
  const config = { model_type: 'qwen2_vl', image_token_id: 151655, video_token_id: 151656, vision_config: { spatial_merge_size: 2 } };
  test('arange and delta 0 without a mask, for every row (no division by the batch size)', () => {
    const r = ropeIndex(config, { inputIds: [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]] });
    assert.deepEqual([...r.ropeDeltas], [0, 0, 0]);
    assert.deepEqual([...r.positions.subarray(0, 4)], [0, 1, 2, 3]);
  });
  test('cumsum(mask) - 1, padding at 1, delta = max + 1 - L', () => {
    const r = ropeIndex(config, { inputIds: [[0, 0, 7, 8, 9], [1, 2, 3, 4, 5]], attentionMask: [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]] });
    assert.deepEqual([...r.positions.subarray(0, 10)], [1, 1, 0, 1, 2, 0, 1, 2, 3, 4]);
    assert.deepEqual([...r.ropeDeltas], [-2, 0]);
    const one = ropeIndex(config, { inputIds: [4, 5, 6], attentionMask: [0, 0, 1] });
    assert.deepEqual([...one.positions], [1, 1, 0, 1, 1, 0, 1, 1, 0]);
    assert.equal(one.ropeDelta, -1);
  });
});

describe('bad input', () => {
  const c = byName('qwen2_vl: images and videos mixed');
  const v = byName('qwen2_5_vl: video, second_per_grid_ts 0.5, tokens_per_second 2');
  const q3 = byName('qwen3_vl: one video');
  const b = byName('qwen2_vl: batch of 3, left padding');
  const ids = c.inputs.inputIds;

  test('config', () => {
    rejects(() => ropeIndex(null, optionsOf(c)), TypeError, /config must be an object/);
    rejects(() => ropeIndex('qwen2_vl', optionsOf(c)), TypeError, /config/);
    rejects(() => ropeIndex({ ...c.config, model_type: 'llava' }, optionsOf(c)), RangeError,
      /config\.model_type must be one of 'qwen2_vl', 'qwen2_5_vl', 'qwen3_vl', 'qwen3_vl_moe', got the string "llava"/);
    rejects(() => ropeIndex({ ...c.config, model_type: undefined }, optionsOf(c)), RangeError, /config\.model_type .*got undefined/);
    const { image_token_id, ...noImage } = c.config;
    rejects(() => ropeIndex(noImage, optionsOf(c)), RangeError, /config\.image_token_id must be an integer token id, got undefined/);
    rejects(() => ropeIndex({ ...c.config, video_token_id: '151656' }, optionsOf(c)), TypeError, /config\.video_token_id/);
    rejects(() => ropeIndex({ ...c.config, vision_config: {} }, optionsOf(c)), RangeError, /config\.vision_config\.spatial_merge_size/);
    rejects(() => ropeIndex({ ...c.config, vision_config: undefined }, optionsOf(c)), RangeError, /config\.vision_config\.spatial_merge_size/);
    rejects(() => ropeIndex({ ...v.config, vision_config: { spatial_merge_size: 2 } }, optionsOf(v)), RangeError,
      /config\.vision_config\.tokens_per_second/);
    // The text_config-bearing form: ids in text_config are found.
    const { image_token_id: i, video_token_id: vi, ...rest } = c.config;
    const nested = { ...rest, text_config: { image_token_id: i, video_token_id: vi } };
    assert.deepEqual(plain(ropeIndex(nested, optionsOf(c))), expectedOf(c));
  });

  test('options', () => {
    rejects(() => ropeIndex(c.config), TypeError, /inputIds must be an Array, a typed array or a tensor/);
    rejects(() => ropeIndex(c.config, []), TypeError, /options must be an object/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridTHW: [] })), TypeError, /unknown option 'imageGridTHW'/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { dtype: 'int16' })), RangeError, /dtype must be one of 'int32', 'int64'/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { as: 'ort' })), RangeError, /as must be one of 'array', 'tensor'/);
  });

  test('inputIds: not integers, out of the int32 range, wrong shapes', () => {
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: [1, 2.5, 3] })), RangeError, /inputIds\[1\] must be an integer/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: [1, '2', 3] })), TypeError, /inputIds\[1\] must be an integer number/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: BigInt64Array.of(1n, 2n ** 31n) })), RangeError,
      /inputIds\[1\] must be an integer from -2147483648 to 2147483647, got the BigInt 2147483648n/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: BigInt64Array.of(1n, -(2n ** 63n)) })), RangeError, /inputIds\[1\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: Uint32Array.of(1, 2 ** 32 - 1) })), RangeError, /inputIds\[1\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: Float32Array.of(1, NaN) })), RangeError, /inputIds\[1\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: 'abc' })), TypeError, /inputIds must be/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: [] })), RangeError, /inputIds must hold at least one token/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: [[1, 2], [3]] })), RangeError, /inputIds\[1\] must have 2 entries/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: { data: new Int32Array(8), dims: [2, 2, 2] } })), RangeError,
      /inputIds must have dims \[L\] or \[B, L\], got \[2,2,2\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: { data: new Int32Array(7), dims: [2, 4] } })), RangeError,
      /inputIds\.data must have 8 entries \(the product of dims \[2,4\]\), got 7/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: { data: new Int32Array(4), dims: [2, -2] } })), RangeError,
      /inputIds\.dims\[1\] must be a non-negative integer/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: { data: 'abcd', dims: [4] } })), TypeError, /inputIds\.data/);
    const detached = new Int32Array(ids);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    rejects(() => ropeIndex(c.config, optionsOf(c, { inputIds: detached })), TypeError, /inputIds is backed by a detached ArrayBuffer/);
  });

  test('a GPU tensor is refused before its data is read', () => {
    let read = false;
    const gpu = { location: 'gpu-buffer', get data() { read = true; throw new Error('read'); }, dims: [3], type: 'int64' };
    rejects(() => ropeIndex(c.config, { inputIds: gpu }), TypeError, /inputIds must be a tensor on the CPU, got one at location the string "gpu-buffer"/);
    assert.equal(read, false);
    const gpuMask = { location: 'texture', get data() { throw new Error('read'); }, dims: [ids.length] };
    rejects(() => ropeIndex(c.config, optionsOf(c, { attentionMask: gpuMask })), TypeError, /attentionMask must be a tensor on the CPU/);
  });

  test('attentionMask: shape, values', () => {
    rejects(() => ropeIndex(b.config, optionsOf(b, { attentionMask: b.inputs.attentionMask[0] })), RangeError,
      /attentionMask must have the dims of inputIds \[3,28\], got \[28\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { attentionMask: ids.map(() => 2) })), RangeError, /attentionMask\[0\] must be an integer from 0 to 1/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { attentionMask: ids.map(() => 0) })), RangeError, /attentionMask must keep at least one token/);
  });

  test('grid counts that do not match the image / video tokens', () => {
    const im = c.inputs.imageGridThw;
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: im.slice(1) })), RangeError,
      /imageGridThw must have 2 rows \(one per run of image tokens in inputIds\), got 1/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: [...im, [1, 2, 2]] })), RangeError, /imageGridThw must have 2 rows.*got 3/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { videoGridThw: undefined })), RangeError, /videoGridThw must have 2 rows .*got none/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: undefined, videoGridThw: undefined })), RangeError,
      /imageGridThw must be given: inputIds holds image tokens/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: [[1, 4, 6], [1, 4, 4]] })), RangeError,
      /imageGridThw\[1\] = \[1,4,4\] stands for 4 tokens .* has 1/);
    rejects(() => ropeIndex(q3.config, optionsOf(q3, { videoGridThw: [[2, 4, 4]] })), RangeError,
      /videoGridThw must have frames \(t\) adding up to 3/);
    rejects(() => ropeIndex(q3.config, optionsOf(q3, { videoGridThw: [[3, 4, 2]] })), RangeError,
      /videoGridThw\[0\] = \[3,4,2\] frame 0 stands for 2 tokens/);
  });

  test('grids: shapes, values, merge size', () => {
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: [1, 4, 6, 1, 2] })), RangeError, /imageGridThw must have dims \[n, 3\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: [[1, 4, 6, 1], [1, 2, 2, 1]] })), RangeError, /imageGridThw must have dims \[n, 3\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: [[1, 4, 5], [1, 2, 2]] })), RangeError,
      /imageGridThw\[0\] must have h and w divisible by spatial_merge_size 2, got \[1,4,5\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { videoGridThw: [[0, 4, 4], [3, 2, 4]] })), RangeError, /videoGridThw\[0\] must be an integer from 1/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: [[1, 4, 6], [1, 2, 2n ** 40n]] })), RangeError, /imageGridThw\[5\]/);
    rejects(() => ropeIndex(c.config, optionsOf(c, { imageGridThw: { data: [1, 4, 6, 1, 2, 2], dims: [3, 2] } })), RangeError,
      /imageGridThw must have dims \[n, 3\]/);
  });

  test('secondPerGridTs', () => {
    rejects(() => ropeIndex(c.config, optionsOf(c, { secondPerGridTs: [1, 1] })), TypeError, /secondPerGridTs applies only to model_type 'qwen2_5_vl'/);
    rejects(() => ropeIndex(v.config, optionsOf(v, { secondPerGridTs: [1, 2] })), RangeError, /secondPerGridTs must have 1 entries \(one per video\), got 2/);
    rejects(() => ropeIndex(v.config, optionsOf(v, { secondPerGridTs: [-1] })), RangeError, /secondPerGridTs\[0\] must be a finite number at least 0/);
    rejects(() => ropeIndex(v.config, optionsOf(v, { secondPerGridTs: [Infinity] })), RangeError, /secondPerGridTs\[0\]/);
    rejects(() => ropeIndex(v.config, optionsOf(v, { secondPerGridTs: ['1'] })), TypeError, /secondPerGridTs\[0\] must be a number/);
    // An int64 list is read by value, as every list of numbers is (1n is 1 second).
    assert.deepEqual(ropeIndex(v.config, optionsOf(v, { secondPerGridTs: BigInt64Array.of(1n) })), ropeIndex(v.config, optionsOf(v, { secondPerGridTs: [1] })));
  });

  test('positions past int32 need dtype int64', () => {
    const huge = { ...v.config, vision_config: { ...v.config.vision_config, tokens_per_second: 2 ** 24 } };
    rejects(() => ropeIndex(huge, optionsOf(v, { secondPerGridTs: [1000] })), RangeError, /positions has \d+, outside the int32 range; pass dtype: 'int64'/);
    const r = ropeIndex(huge, optionsOf(v, { secondPerGridTs: [1000], dtype: 'int64' }));
    assert.ok(r.positions.some((x) => x > 2n ** 31n));
  });
});

describe('tensor.js', () => {
  test('readIntegers: forms, dims, Int32Array or Float64Array by range', () => {
    assert.deepEqual(readIntegers('f', 'x', [1, 2, 3]), { values: Int32Array.of(1, 2, 3), dims: [3] });
    assert.deepEqual(readIntegers('f', 'x', [[1, 2], Int32Array.of(3, 4)]), { values: Int32Array.of(1, 2, 3, 4), dims: [2, 2] });
    assert.deepEqual(readIntegers('f', 'x', { data: BigUint64Array.of(5n, 6n), dims: [1, 2] }), { values: Int32Array.of(5, 6), dims: [1, 2] });
    const wide = readIntegers('f', 'x', BigInt64Array.of(2n ** 40n), { min: 0, max: Number.MAX_SAFE_INTEGER });
    assert.ok(wide.values instanceof Float64Array);
    assert.equal(wide.values[0], 2 ** 40);
    assert.deepEqual(readIntegers('f', 'x', [1, 2, 3, 4, 5, 6], { dims: [-1] }).dims, [6]);
    assert.throws(() => readIntegers('f', 'x', [[1, 2, 3]], { dims: [-1, 2] }), /posenc\.f: x must have dims \[n,2\], got \[1,3\]/);
    assert.throws(() => readIntegers('f', 'x', BigInt64Array.of(0n, 2n ** 63n - 1n), { min: 0, max: 10 }),
      (e) => e instanceof RangeError && /x\[1\] must be an integer from 0 to 10, got the BigInt 9223372036854775807n/.test(e.message));
    assert.throws(() => readIntegers('f', 'x', new DataView(new ArrayBuffer(4))), TypeError);
    assert.throws(() => readIntegers('f', 'x', [[1], 2]), (e) => e instanceof TypeError && /x\[1\] must be an Array or a typed array/.test(e.message));
  });

  test('readTensor: location, dims, data', () => {
    assert.deepEqual(readTensor('f', 't', { data: [1, 2, 3, 4, 5, 6], dims: [2, 3], location: 'cpu' }).dims, [2, 3]);
    assert.deepEqual(readTensor('f', 't', { data: [], dims: [0, 3] }).dims, [0, 3]);
    assert.throws(() => readTensor('f', 't', { data: [1], dims: 1 }), (e) => e instanceof TypeError && /t\.dims must be an Array/.test(e.message));
    assert.throws(() => readTensor('f', 't', { data: [1], dims: [1.5] }), RangeError);
    assert.throws(() => readTensor('f', 't', { location: 'ml-tensor', get data() { throw new Error('read'); }, dims: [1] }),
      (e) => e instanceof TypeError && /t must be a tensor on the CPU/.test(e.message));
  });

  test('integerOutput and readOutputOptions', () => {
    assert.deepEqual(readOutputOptions('f', {}), { dtype: 'int32', tensor: false });
    assert.deepEqual(readOutputOptions('f', { dtype: 'int64', as: 'tensor' }), { dtype: 'int64', tensor: true });
    assert.throws(() => readOutputOptions('f', { dtype: 3 }), TypeError);
    const values = Float64Array.of(1, -2, 3, 2 ** 40);
    assert.deepEqual(integerOutput('f', 'v', values, [4], { dtype: 'int64' }), BigInt64Array.of(1n, -2n, 3n, 2n ** 40n));
    assert.throws(() => integerOutput('f', 'v', values, [4]), (e) => e instanceof RangeError && /v has 1099511627776, outside the int32 range/.test(e.message));
    const t = integerOutput('f', 'v', values.subarray(0, 3), [3, 1], { tensor: true });
    assert.deepEqual(t, { data: Int32Array.of(1, -2, 3), dims: [3, 1], type: 'int32' });
  });
});
