// Rotary position embedding (RoPE): pe.rotary({ headDim, base, rotaryDim, layout, scaling }) or
// pe.rotary({ config, ...overrides }) or pe.rotary({ preset, ...overrides }) (a name of
// pe.rotaryPresets, rotary_presets.js) returns a Rotary object owning a core RotaryEmbedding
// (bindings/rotary_bindings.cpp): rot.apply(x, { heads, offset, positions }) rotates
// [L, heads, headDim] in place, rot.cosSin(length, { offset, positions }) returns Hugging Face's
// cos/sin tables, rot.inverseFrequencies / rot.attentionScaling say what is used.
//
// Data flows one way: options -> checks (check.js) -> one record of doubles in wasm memory -> the
// core; rows go through the scratch region in chunks of about 256 KB, one call per chunk, and are
// copied back into the caller's array (apply) or into new JS-owned arrays (cosSin).

import {
  checkBoolean,
  checkEnum,
  checkFloat32Array,
  checkNumber,
  checkNumberList,
  checkOptionsObject,
  float64Entries,
  isTensorLike,
  rangeError,
  readTensor,
  typeError,
} from './check.js';
import { runChunks } from './chunks.js';
import { FLOAT_DTYPES } from './float16.js';
import { checkDtype, halfBits, halfInput, halfOut } from './half.js';
import { ownHandle } from './lifetime.js';
import { ROTARY_PRESETS } from './rotary_presets.js';

export const ROTARY_LAYOUTS = ['half', 'interleaved', 'deinterleave'];
const MODEL_RULES = ['llama'];
// Words for the enums of a model rule (posenc::HeadDimSource, LayerRope, LayerTypes, MultimodalRope).
const RULE_WORDS = {
  head: ['head_dim, else hidden_size / num_attention_heads', 'qk_rope_head_dim', 'head_dim; global_head_dim on proportional full-attention layers'],
  rope: [
    'every layer', 'sliding layers rope_local_base_freq unscaled; full layers rope_theta and the scaling',
    'only sliding-window layers', 'no_rope_layers (0: none; default every 4th layer)',
    'linear-attention layers have none', 'none when alibi is true',
  ],
  types: [
    'causal', 'layer_types, else every sliding_window_pattern-th layer full, the rest sliding',
    'layer_types, else even layers sliding, odd full', 'layer_types, else every full_attention_interval-th layer full, the rest linear',
    'chunked (attention_chunk_size) on RoPE layers, causal on NoPE layers', 'sliding_window on every layer when set',
    'sliding from max_window_layers on when use_sliding_window', 'sliding on even layers below max_window_layers when use_sliding_window',
    'sliding_window on every layer (4096 when absent, none when null)', 'sliding_window on every layer when use_sliding_window',
  ],
  multimodal: [null, 'sections t | h | w (mrope_section)', 'interleaved sections (mrope_section)', 'mrope_interleaved'],
};
// Indexed as posenc::RopeScalingType.
export const ROPE_SCALING_TYPES = ['default', 'linear', 'dynamic', 'yarn', 'llama3', 'longrope'];

const ROTARY_OPTIONS = new Set(['headDim', 'base', 'rotaryDim', 'layout', 'scaling', 'config', 'preset', 'layer', 'modelRule', 'vision2d']);
// A vision tower's 2D RoPE (posenc/multimodal's rotary2d): Qwen2-VL / Qwen2.5-VL, Pixtral.
const VISION_RULES = ['qwen', 'pixtral'];
const SCALING_OPTIONS = new Set([
  'type', 'factor', 'originalMaxPositions', 'lowFreqFactor', 'highFreqFactor', 'betaFast', 'betaSlow',
  'attentionFactor', 'mscale', 'mscaleAllDim', 'truncate', 'shortFactor', 'longFactor',
]);
const APPLY_OPTIONS = new Set(['heads', 'offset', 'positions', 'order', 'batch', 'as', 'dtype']);
const MASK_OPTIONS = new Set(['layer', 'queryLength', 'keyLength', 'offset', 'slidingWindow', 'chunkSize']);
const SCALE_OPTIONS = new Set(['layer', 'length', 'offset']);
const COS_SIN_OPTIONS = new Set(['offset', 'positions', 'batch', 'cache', 'out', 'as', 'dtype']);
// rot.apply's orders of x's axes (batch, seq, heads, headDim) and rot.cosSin's table layouts: Hugging
// Face's [seq, rotaryDim], ONNX Runtime's cos_cache / sin_cache [seq, rotaryDim / 2].
const ORDERS = ['shd', 'bshd', 'bhsd'];
const FORMS = ['array', 'tensor'];
const CACHES = ['hf', 'ort'];

// Field indices of the records rotary_bindings.cpp reads (RotaryField, RowsField).
const OPTION = {
  headDim: 0, base: 1, rotaryDim: 2, layout: 3, scalingType: 4, factor: 5, originalMax: 6, lowFreq: 7,
  highFreq: 8, betaFast: 9, betaSlow: 10, attention: 11, mscale: 12, mscaleAllDim: 13, truncate: 14,
  shortFactor: 15, longFactor: 16, factorCount: 17, layer: 18, modelRule: 19, vision: 20,
};
const ROWS = { count: 0, first: 1, positions: 2, sequenceLength: 3, heads: 4, out: 5, outLen: 6, out2: 7, mrope: 8, headsFirst: 9 };
// The layer record rotary_bindings.cpp writes (LayerField).
const LAYER = {
  hasRope: 0, numLayers: 1, layersDiffer: 2, slidingWindow: 3, attentionChunk: 4, linearAttention: 5,
  queryTemperature: 6, floorScale: 7, attnScale: 8, softmaxScaleFactor: 9, mropeT: 10, mropeInterleaved: 13,
  bidirectional: 14,
};
const SCALING_NUMBERS = [
  ['factor', OPTION.factor], ['originalMaxPositions', OPTION.originalMax], ['lowFreqFactor', OPTION.lowFreq],
  ['highFreqFactor', OPTION.highFreq], ['betaFast', OPTION.betaFast], ['betaSlow', OPTION.betaSlow],
  ['attentionFactor', OPTION.attention], ['mscale', OPTION.mscale], ['mscaleAllDim', OPTION.mscaleAllDim],
];

// Floats of scratch one chunk of rows uses (256 KB stays in cache).
const SCRATCH_FLOATS = 65536;
const MAX_POSITION = 2 ** 31 - 1;
const encoder = new TextEncoder();

/** The RangeError of a failed core call: the core's message names the argument or config key. */
export function familyError(fn, handle) {
  return new RangeError(`posenc.${fn}: ${handle.errorMessage()}`);
}

/**
 * Checks explicit positions (finite, 0..2^31-1: the core's own check would name an index within
 * a chunk) and returns them as a Float64Array with the largest.
 */
export function checkPositions(fn, list, length, name = 'positions') {
  const positions = float64Entries(fn, name, checkNumberList(fn, name, list, length), length, {
    min: 0,
    max: MAX_POSITION,
    expected: 'a finite number from 0 to 2^31 - 1',
  });
  let largest = 0;
  for (let i = 0; i < length; i++) if (positions[i] > largest) largest = positions[i];
  return { positions, largest };
}

/**
 * Three position rows (t, h, w) of a multimodal RoPE: [t, h, w] (each an Array or typed array of
 * `length` numbers) or one typed array of 3 * length (the t row, then h, then w). Returns them as
 * one Float64Array with the largest, or null when `list` is one plain row.
 */
export function checkThreeRows(fn, list, length) {
  let rows = null;
  if (Array.isArray(list) && list.length === 3 && list.every((r) => r !== null && typeof r === 'object')) {
    rows = list;
  } else if (ArrayBuffer.isView(list) && list.length === 3 * length && length !== 3 * length) {
    rows = [0, 1, 2].map((k) => list.subarray(k * length, (k + 1) * length));
  }
  if (rows === null) return null;
  if (list instanceof Float64Array) {
    // The common case (rotary2d's rows, a transformers.js-style tensor's data): one pass, and the
    // core reads a copy of it per chunk, so no copy here.
    let largest = 0;
    let i = 0;
    for (; i < list.length; i++) {
      const v = list[i];
      if (!(v >= 0 && v <= MAX_POSITION)) break;
      if (v > largest) largest = v;
    }
    if (i === list.length) return { positions: list, largest };
  }
  const flat = new Float64Array(3 * length);
  let largest = 0;
  ['t', 'h', 'w'].forEach((name, k) => {
    const { positions, largest: top } = checkPositions(fn, rows[k], length, `positions.${name}`);
    flat.set(positions, k * length);
    largest = Math.max(largest, top);
  });
  return { positions: flat, largest };
}

const CONFIG_TEXT = "must be JSON text of an object (a model's config.json)";

/**
 * A config (an object, or its JSON text) as the JSON text the core reads. Text is parsed here
 * first, so that a key given twice takes its last value, as Python's json (and so Hugging Face)
 * and JSON.parse do; an object must hold JSON values only.
 */
function configText(fn, config) {
  let c = config;
  if (typeof c === 'string') {
    try {
      c = JSON.parse(c);
    } catch {
      throw new RangeError(`posenc.${fn}: config ${CONFIG_TEXT}`);
    }
    if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new RangeError(`posenc.${fn}: config ${CONFIG_TEXT}`);
  } else if (c === null || typeof c !== 'object' || Array.isArray(c)) {
    throw typeError(fn, 'config', "a model's config.json object (or its JSON text)", c);
  }
  try {
    return JSON.stringify(c);
  } catch (error) {
    // A BigInt or a cycle (TypeError), or nesting deeper than the engine's stack (RangeError).
    const Type = error instanceof RangeError ? RangeError : TypeError;
    throw new Type(`posenc.${fn}: config must hold JSON values only (no BigInt, no cycles, not nested too deeply): ${error.message}`);
  }
}

/** Adds pe.rotary to `api` (ctx: see api.js). */
export function attachRotaryApi(api, ctx) {
  const { Module, scratch, withBuffers } = ctx;
  // The threaded build's pipelined chunks (runRows): big enough for the core to split them between
  // the threads (64K values a share, about four shares a thread).
  const threadedChunk = Module.posencPool ? SCRATCH_FLOATS * 4 * (Module.posencPool + 1) : 0;

  // The scaling options into the record (numbers checked for type here, ranges by the core).
  function writeScaling(fn, scaling, record) {
    const s = checkOptionsObject(fn, scaling, SCALING_OPTIONS, 'scaling');
    if (s.type === undefined) throw typeError(fn, 'scaling.type', `one of '${ROPE_SCALING_TYPES.join("', '")}'`, undefined);
    record[OPTION.scalingType] = checkEnum(fn, 'scaling.type', s.type, ROPE_SCALING_TYPES);
    // As Hugging Face's rope_scaling validation: every rule but longrope needs its factor.
    if (s.factor === undefined && s.type !== 'default' && s.type !== 'longrope') {
      throw typeError(fn, 'scaling.factor', `a number (required by type '${s.type}')`, undefined);
    }
    for (const [name, field] of SCALING_NUMBERS) {
      if (s[name] !== undefined) record[field] = checkNumber(fn, `scaling.${name}`, s[name]);
    }
    if (s.truncate !== undefined) record[OPTION.truncate] = checkBoolean(fn, 'scaling.truncate', s.truncate) ? 1 : 0;
    const lists = {};
    for (const name of ['shortFactor', 'longFactor']) {
      if (s[name] === undefined) continue;
      const given = checkNumberList(fn, `scaling.${name}`, s[name], undefined, { expected: 'an Array or typed array of numbers' });
      lists[name] = float64Entries(fn, `scaling.${name}`, given, given.length);
    }
    if (lists.shortFactor && lists.longFactor && lists.shortFactor.length !== lists.longFactor.length) {
      throw new RangeError(`posenc.${fn}: scaling.shortFactor and scaling.longFactor must have the same length (rotaryDim / 2), got ${lists.shortFactor.length} and ${lists.longFactor.length}`);
    }
    return lists;
  }

  function newRotary(options) {
    const fn = 'rotary';
    const o = checkOptionsObject(fn, options, ROTARY_OPTIONS);
    const record = new Float64Array(Module.ROTARY_OPTION_FIELDS).fill(NaN);
    let text = null;
    let config = o.config;
    if (o.preset !== undefined) {
      if (config !== undefined) throw new TypeError(`posenc.${fn}: give config or preset, not both`);
      const names = Object.keys(ROTARY_PRESETS);
      const expected = `one of '${names.join("', '")}' (pe.rotaryPresets)`;
      if (typeof o.preset !== 'string') throw typeError(fn, 'preset', expected, o.preset);
      if (!Object.hasOwn(ROTARY_PRESETS, o.preset)) throw rangeError(fn, 'preset', expected, o.preset);
      config = ROTARY_PRESETS[o.preset];
    }
    if (config !== undefined) text = configText(fn, config); else if (o.headDim === undefined) {
      throw typeError(fn, 'headDim', 'an integer number (or give config or preset)', undefined);
    }
    if (text === null && (o.layer !== undefined || o.modelRule !== undefined)) {
      throw new TypeError(`posenc.${fn}: ${o.layer !== undefined ? 'layer' : 'modelRule'} goes with config or preset`);
    }
    if (o.layer !== undefined) record[OPTION.layer] = checkNumber(fn, 'layer', o.layer, { integer: true, min: 0, max: 65535 });
    record[OPTION.modelRule] = o.modelRule === undefined ? 0 : checkEnum(fn, 'modelRule', o.modelRule, MODEL_RULES) + 1;
    if (o.headDim !== undefined) {
      record[OPTION.headDim] = checkNumber(fn, 'headDim', o.headDim, { integer: true, min: 2, max: Module.ROTARY_MAX_HEAD_DIM });
    }
    if (o.base !== undefined) record[OPTION.base] = checkNumber(fn, 'base', o.base, { above: 1 });
    if (o.rotaryDim !== undefined) {
      record[OPTION.rotaryDim] = checkNumber(fn, 'rotaryDim', o.rotaryDim, { integer: true, min: 2, max: Module.ROTARY_MAX_HEAD_DIM });
    }
    if (o.layout !== undefined) record[OPTION.layout] = checkEnum(fn, 'layout', o.layout, ROTARY_LAYOUTS);
    if (text === null && o.rotaryDim === undefined && o.headDim % 2 !== 0) {
      throw new RangeError(`posenc.${fn}: headDim must be even when rotaryDim is not given (all of the head rotates), got ${o.headDim}`);
    }
    let lists = {};
    if (o.scaling !== undefined && o.scaling !== null) lists = writeScaling(fn, o.scaling, record);
    if (text === null) {
      // Explicit options: the defaults of the JS API.
      if (Number.isNaN(record[OPTION.base])) record[OPTION.base] = 10000;
      if (Number.isNaN(record[OPTION.rotaryDim])) record[OPTION.rotaryDim] = 0; // = headDim
      if (Number.isNaN(record[OPTION.layout])) record[OPTION.layout] = 0;
      if (Number.isNaN(record[OPTION.scalingType])) record[OPTION.scalingType] = 0;
    }
    const bytes = text === null ? null : encoder.encode(text);
    const factorCount = Math.max(lists.shortFactor?.length ?? 0, lists.longFactor?.length ?? 0);
    record[OPTION.factorCount] = factorCount;
    const vision = o.vision2d === undefined ? 0 : checkEnum(fn, 'vision2d', o.vision2d, VISION_RULES) + 1;
    if (vision && (text !== null || o.rotaryDim !== undefined || o.layout !== undefined || o.scaling !== undefined)) {
      throw new TypeError(`posenc.${fn}: vision2d goes with headDim and base only (all of the head rotates, rotate-half, unscaled)`);
    }
    record[OPTION.vision] = vision;
    const handle = new Module.Rotary();
    try {
      withBuffers(
        fn,
        [record.length * 8, bytes ? bytes.length : null, lists.shortFactor ? factorCount * 8 : null, lists.longFactor ? factorCount * 8 : null],
        (recordPtr, textPtr, shortPtr, longPtr) => {
          if (shortPtr) Module.HEAPF64.set(lists.shortFactor, shortPtr / 8);
          if (longPtr) Module.HEAPF64.set(lists.longFactor, longPtr / 8);
          record[OPTION.shortFactor] = shortPtr;
          record[OPTION.longFactor] = longPtr;
          Module.HEAPF64.set(record, recordPtr / 8);
          if (textPtr) Module.HEAPU8.set(bytes, textPtr);
          const code = bytes ? handle.initConfig(textPtr, bytes.length, recordPtr) : handle.init(recordPtr);
          if (code !== 0) throw familyError(fn, handle);
        },
      );
    } catch (error) {
      handle.delete();
      throw error;
    }
    const info = layerInfo(handle);
    if (bytes && info[LAYER.hasRope] === 0) {
      // A layer without RoPE (NoPE, linear attention, Cohere2's full layers, Falcon with ALiBi).
      handle.delete();
      return null;
    }
    return makeRotary(handle, bytes || vision ? info : null);
  }

  function layerInfo(handle) {
    return withBuffers('rotary', [Module.ROTARY_LAYER_FIELDS * 8], (ptr) => {
      handle.layerInfo(ptr);
      return Module.HEAPF64.slice(ptr / 8, ptr / 8 + Module.ROTARY_LAYER_FIELDS);
    });
  }

  function makeRotary(handle, info) {
    const headDim = handle.headDim();
    const rotaryDim = handle.rotaryDim();
    const layout = ROTARY_LAYOUTS[handle.layout()];
    const scaling = ROPE_SCALING_TYPES[handle.scalingType()];
    const attentionScaling = handle.attentionScaling();
    const inverseFrequencies = withBuffers('rotary', [(rotaryDim / 2) * 8], (ptr) => {
      handle.inverseFrequencies(ptr);
      return Module.HEAPF64.slice(ptr / 8, ptr / 8 + rotaryDim / 2);
    });
    const rot = {};
    const live = ownHandle(rot, handle, (method) => `posenc.rotary.${method}: this rotary embedding was disposed`);

    // Rows [r0, r0 + n) of a call, a chunk at a time in the scratch region: its data, then its
    // positions, then its record. Per chunk, fill(r0, n, dataPtr, record) copies the input in and
    // sets the call's own record fields, run(recordPtr) calls the core (0 or an error code) and
    // drain(r0, n, dataPtr) copies the output out. With threaded (the threaded build's applyStart /
    // cosSinStart), chunks big enough for the core to split go in two regions used in turn: the
    // workers compute chunk i while chunk i - 1 is copied out and chunk i + 1 in.
    function runRows(fn, rows, rowFloats, outFloats, fill, run, drain, threaded, floats = SCRATCH_FLOATS) {
      const start = threadedChunk > 0 ? threaded : null;
      const chunkRows = Math.max(1, Math.min(rows.count, Math.floor(Math.max(floats, start ? threadedChunk : 0) / rowFloats)));
      const dataBytes = Math.ceil((chunkRows * rowFloats * 4) / 16) * 16;
      const rowsOfPositions = rows.mrope ? 3 : rows.positions ? 1 : 0;
      const positionBytes = rowsOfPositions * chunkRows * 8;
      const region = dataBytes + positionBytes + Module.ROTARY_ROWS_FIELDS * 8;
      const base = scratch(fn, (start && rows.count > chunkRows ? 2 : 1) * region);
      const record = new Float64Array(Module.ROTARY_ROWS_FIELDS);
      record[ROWS.sequenceLength] = rows.sequenceLength;
      // Writes chunk [r0, r0 + n) into region k; returns its record's address.
      const prepare = (r0, n, k) => {
        const dataPtr = base + k * region;
        const positionsPtr = rowsOfPositions ? dataPtr + dataBytes : 0;
        if (rows.mrope) {
          // The chunk's t, h and w rows, each n long (the core reads row k at k * n), copied by a
          // loop rather than through three subarray views per chunk.
          const heap = Module.HEAPF64;
          for (let j = 0, to = positionsPtr / 8; j < 3; j++) {
            for (let i = j * rows.count + r0, end = i + n; i < end; i++) heap[to++] = rows.mrope[i];
          }
        } else if (positionsPtr) {
          Module.HEAPF64.set(rows.positions.subarray(r0, r0 + n), positionsPtr / 8);
        }
        record[rows.mrope ? ROWS.mrope : ROWS.positions] = positionsPtr;
        record[ROWS.out] = dataPtr;
        record[ROWS.count] = n;
        record[ROWS.first] = rows.first + r0;
        record[ROWS.outLen] = n * outFloats;
        fill(r0, n, dataPtr, record);
        const recordPtr = dataPtr + dataBytes + positionBytes;
        Module.HEAPF64.set(record, recordPtr / 8);
        return recordPtr;
      };
      runChunks(
        rows.count,
        (r0) => Math.min(chunkRows, rows.count - r0),
        prepare,
        (r0, n, k) => drain(r0, n, base + k * region),
        () => {
          throw familyError(fn, handle);
        },
        run,
        start,
        () => handle.finish(),
      );
    }

    function resolveRows(fn, length, o) {
      let first = 0;
      if (o.offset !== undefined) first = checkNumber(fn, 'offset', o.offset, { min: 0, max: MAX_POSITION });
      if (o.positions !== undefined) {
        if (o.offset !== undefined) throw new TypeError(`posenc.${fn}: give offset or positions, not both`);
        const three = checkThreeRows(fn, o.positions, length);
        if (three !== null) {
          if (mropeSection === null) {
            throw new RangeError(`posenc.${fn}: positions must be one row of ${length} positions: three rows (t, h, w) are for a multimodal RoPE (rot.mropeSection)`);
          }
          return { count: length, first: 0, positions: null, mrope: three.positions, sequenceLength: three.largest + 1 };
        }
        const { positions, largest } = checkPositions(fn, o.positions, length);
        return { count: length, first: 0, positions, sequenceLength: largest + 1 };
      }
      if (first + length - 1 > MAX_POSITION) {
        throw new RangeError(`posenc.${fn}: offset + length - 1 must be at most 2^31 - 1, got ${first + length - 1}`);
      }
      return { count: length, first, positions: null, sequenceLength: first + length };
    }

    const mropeSection = info !== null && info[LAYER.mropeT] >= 0
      ? Object.freeze([info[LAYER.mropeT], info[LAYER.mropeT + 1], info[LAYER.mropeT + 2]])
      : null;
    rot.modelType = info === null ? null : handle.modelType();
    rot.layerType = info === null ? null : handle.layerType() || null;
    rot.softmaxScaleFactor = info === null ? 1 : info[LAYER.softmaxScaleFactor];
    rot.mropeSection = mropeSection;
    rot.mropeInterleaved = mropeSection !== null && info[LAYER.mropeInterleaved] === 1;
    rot.headDim = headDim;
    rot.rotaryDim = rotaryDim;
    rot.layout = layout;
    rot.scaling = scaling;
    rot.attentionScaling = attentionScaling;
    // A copy per read: writing into it cannot change what later reads say was used.
    Object.defineProperty(rot, 'inverseFrequencies', { enumerable: true, get: () => inverseFrequencies.slice() });

    /**
     * The frequencies a call whose largest position + 1 is sequenceLength uses: inverseFrequencies
     * except past the original context of 'dynamic' (recomputed base) and 'longrope' (long factors).
     */
    rot.inverseFrequenciesFor = function inverseFrequenciesFor(sequenceLength) {
      const fn = 'rotary.inverseFrequenciesFor';
      const h = live('inverseFrequenciesFor');
      checkNumber(fn, 'sequenceLength', sequenceLength, { min: 1, max: 2 ** 31 });
      return withBuffers(fn, [(rotaryDim / 2) * 8], (ptr) => {
        if (h.inverseFrequenciesFor(sequenceLength, ptr) !== 0) throw familyError(fn, h);
        return Module.HEAPF64.slice(ptr / 8, ptr / 8 + rotaryDim / 2);
      });
    };

    /**
     * The row options of each of `batch` sequences of `length` rows: offset a number (every
     * sequence) or one per sequence; positions one row (or [t, h, w]) for every sequence, or one per
     * sequence: [batch, seq] (Array of rows, flat list or tensor), [3, batch, seq] for a multimodal
     * RoPE (as Hugging Face's position_ids). A tensor's dims must agree.
     */
    function sequences(fn, o, batch, length) {
      let { offset, positions } = o;
      // position_ids of a batch of one, [1, seq] as an Array of one row.
      if (batch === 1 && Array.isArray(positions) && positions.length === 1 && typeof positions[0] === 'object') positions = positions[0];
      if (offset !== undefined && typeof offset !== 'number') {
        const list = checkNumberList(fn, 'offset', offset, batch, { per: 'sequence' });
        offset = Array.from(float64Entries(fn, 'offset', list, batch));
      }
      if (positions === undefined || (batch === 1 && !isTensorLike(positions))) {
        return Array.from({ length: batch }, (_, b) => ({ offset: Array.isArray(offset) ? offset[b] : offset, positions }));
      }
      if (offset !== undefined) throw new TypeError(`posenc.${fn}: give offset or positions, not both`);
      let data = positions;
      let dims = null;
      if (isTensorLike(positions)) ({ data, dims } = readTensor(fn, 'positions', positions));
      else if (Array.isArray(positions) && typeof positions[0] === 'object') {
        data = positions.flatMap((row, r) => Array.from(checkNumberList(fn, `positions[${r}]`, row, positions[0].length)));
      }
      const flat = checkPositions(fn, checkNumberList(fn, 'positions', data), data.length).positions;
      // Shared by every sequence ([seq]; [3, seq] multimodal), or one per sequence ([batch, seq];
      // [3, batch, seq] multimodal, HF's layout: the t rows of every sequence, then h, then w).
      const m = mropeSection !== null ? 3 : 1;
      const n = flat.length;
      const shared = n === length || n === m * length;
      if (!(shared || n === batch * length || n === m * batch * length) || (dims && dims.at(-1) !== length)) {
        const lead = m > 1 ? '3, ' : '';
        throw new RangeError(`posenc.${fn}: positions must be [seq] or [${lead}batch, seq] = [${lead}${batch}, ${length}], got ${dims ? `dims [${dims}]` : `${n} entries`}`);
      }
      return Array.from({ length: batch }, (_, b) => {
        if (shared) return { positions: flat };
        if (n === batch * length) return { positions: flat.subarray(b * length, (b + 1) * length) };
        const rows = new Float64Array(3 * length);
        for (let k = 0; k < 3; k++) rows.set(flat.subarray((k * batch + b) * length, (k * batch + b + 1) * length), k * length);
        return { positions: rows };
      });
    }

    /** A size option that must agree with the tensor's dims (or is taken from them). */
    function agree(fn, name, given, fromDims) {
      if (given === undefined) return fromDims;
      const v = checkNumber(fn, name, given, { integer: true, min: 1 });
      if (fromDims != null && v !== fromDims) throw new RangeError(`posenc.${fn}: ${name} must agree with x.dims (${fromDims}), got ${v}`);
      return v;
    }

    /**
     * Rotates x in place and returns it: x [seq, heads, headDim] ('shd', the default), [batch, seq,
     * heads, headDim] ('bshd') or [batch, heads, seq, headDim] ('bhsd') float32, row-major, or a
     * tensor { data, dims } of those dims; as: 'tensor' returns { data, dims, type }.
     */
    rot.apply = function apply(input, options) {
      const fn = 'rotary.apply';
      const h = live('apply');
      const o = checkOptionsObject(fn, options, APPLY_OPTIONS);
      const order = o.order === undefined ? 0 : checkEnum(fn, 'order', o.order, ORDERS);
      let x = input;
      let dims;
      // 16-bit data (dtype, or a Float16Array): the core widens each row's rotated channels to
      // float32, rotates them and rounds them back (the 16-bit value nearest to the float32 result).
      const half = (name, v) => {
        const dtype = halfInput(fn, name, v, o.dtype);
        return dtype ? [dtype, halfBits(fn, name, v, dtype)] : [0, checkFloat32Array(fn, name, v)];
      };
      let dtype;
      if (isTensorLike(input)) {
        ({ data: x, dims } = readTensor(fn, 'x', input));
        [dtype, x] = half('x.data', x);
        const rank = order ? 4 : 3;
        if (dims.length !== rank || dims[rank - 1] !== headDim || x.length === 0) {
          throw new RangeError(`posenc.${fn}: x.dims must be ${ORDERS[order]} = [${[...ORDERS[order]]}] with d = ${headDim}, got [${dims}]`);
        }
      } else {
        [dtype, x] = half('x', input);
        // No default: a [L, heads, headDim] array taken as one head would rotate by the wrong positions.
        if (o.heads === undefined) throw typeError(fn, 'heads', 'given: x is [length, heads, headDim] (an integer number, no default)', undefined);
      }
      if (!order && o.batch !== undefined) throw new TypeError(`posenc.${fn}: batch goes with order 'bshd' or 'bhsd'`);
      const heads = agree(fn, 'heads', o.heads, dims && dims[order === 2 ? 1 : order ? 2 : 1]);
      const batch = agree(fn, 'batch', o.batch, dims && (order ? dims[0] : 1)) ?? 1;
      const sequenceFloats = batch * heads * headDim;
      if (x.length === 0 || x.length % sequenceFloats !== 0) {
        throw new RangeError(`posenc.${fn}: x must hold ${order ? 'batch * ' : ''}length * heads * headDim floats (a positive multiple of ${sequenceFloats}), got ${x.length}`);
      }
      const length = x.length / sequenceFloats;
      const each = sequences(fn, o, batch, length);
      const block = length * heads * headDim;
      for (let b = 0; b < batch; b++) {
        const xb = x.subarray(b * block, (b + 1) * block);
        rotateRows(fn, h, xb, heads, each[b], dtype, order === 2);
      }
      if (o.as !== undefined && checkEnum(fn, 'as', o.as, FORMS)) {
        return { data: dtype ? (dims ? input.data : input) : x, dims: dims ?? (order === 2 ? [batch, heads, length, headDim] : [batch, length, heads, headDim].slice(order ? 0 : 1)), type: FLOAT_DTYPES[dtype] };
      }
      return input;
    };

    /**
     * Rotates x ([L, heads, headDim], or [heads, L, headDim] when headsFirst) in place at one
     * sequence's rows (offset or positions).
     */
    // x: float32 values, or with dtype (1 float16, 2 bfloat16) their 16-bit bits, which the core
    // widens a row at a time, rotates and rounds back (Rotary::applyHalf). headsFirst ('bhsd'): a chunk of
    // rows goes in as each head's block of them, [heads, n, headDim], which the core rotates by
    // each row's values once for all heads.
    function rotateRows(fn, h, x, heads, o, dtype, headsFirst) {
      const rowFloats = heads * headDim;
      const rows = resolveRows(fn, x.length / rowFloats, o);
      const run = (ptr) => (dtype ? h.applyHalf(ptr, dtype) : h.apply(ptr));
      const copyIn = (v, ptr) => (dtype ? Module.HEAPU16.set(v, ptr / 2) : Module.HEAPF32.set(v, ptr / 4));
      const view = (ptr, n) => (dtype ? Module.HEAPU16.subarray(ptr / 2, ptr / 2 + n) : Module.HEAPF32.subarray(ptr / 4, ptr / 4 + n));
      if (rows.positions === null && !rows.mrope && x.length <= SCRATCH_FLOATS) {
        // One chunk (a decoding step): no subarray views, closures or record array.
        const dataBytes = Math.ceil(x.length / 4) * 16;
        const base = scratch(fn, dataBytes + Module.ROTARY_ROWS_FIELDS * 8);
        copyIn(x, base);
        const heap = Module.HEAPF64;
        const q = (base + dataBytes) / 8;
        heap[q + ROWS.count] = rows.count;
        heap[q + ROWS.first] = rows.first;
        heap[q + ROWS.positions] = 0;
        heap[q + ROWS.sequenceLength] = rows.sequenceLength;
        heap[q + ROWS.heads] = heads;
        heap[q + ROWS.out] = base;
        heap[q + ROWS.outLen] = x.length;
        heap[q + ROWS.mrope] = 0;
        heap[q + ROWS.headsFirst] = +headsFirst; // the whole x: [heads, L, headDim] as it is
        if (run(base + dataBytes) !== 0) throw familyError(fn, h);
        x.set(view(base, x.length));
        return;
      }
      // A chunk of n rows goes in and out as `parts` slabs of count values: each head's n rows
      // (heads-first), or all of them.
      const parts = headsFirst ? heads : 1;
      const partFloats = rowFloats / parts;
      const length = x.length / rowFloats;
      const from = (k, r0) => (k * length + r0) * partFloats;
      const at = (k, n, dataPtr) => dataPtr + k * n * partFloats * (dtype ? 2 : 4);
      // Heads-first chunks hold 8K values a head at least: one slab copy costs about what a
      // 32-head chunk of 64K values does in all (at 64K, 'bhsd' took 2.3x the time of 'shd').
      runRows(
        fn,
        rows,
        rowFloats,
        rowFloats,
        (r0, n, dataPtr, record) => {
          for (let k = 0; k < parts; k++) copyIn(x.subarray(from(k, r0), from(k, r0) + n * partFloats), at(k, n, dataPtr));
          record[ROWS.heads] = heads;
          record[ROWS.headsFirst] = +headsFirst;
        },
        run,
        (r0, n, dataPtr) => {
          for (let k = 0; k < parts; k++) x.set(view(at(k, n, dataPtr), n * partFloats), from(k, r0));
        },
        dtype ? (ptr) => h.applyHalfStart(ptr, dtype) : (ptr) => h.applyStart(ptr),
        Math.max(SCRATCH_FLOATS, headsFirst * 8192 * heads),
      );
    }

    /**
     * { cos, sin } of each sequence (row options in `each`) one after the other, `width` floats a
     * row: rotaryDim (Hugging Face's layout) or rotaryDim / 2 (ONNX Runtime's cache: the first half
     * of a 'half' / 'deinterleave' row, the even entries of an 'interleaved' one). Into `out`'s
     * arrays, else new Float32Arrays (made here only).
     */
    function tables(fn, h, length, each, width, out, dtype) {
      const size = each.length * length * width;
      const { cos, sin } = out ?? { cos: new Float32Array(size), sin: new Float32Array(size) };
      const step = width < rotaryDim && layout === 'interleaved' ? 2 : 1;
      // 16-bit values (dtype): the core writes their bits where the floats were, at half the index.
      const shift = dtype === 0 ? 2 : 1;
      each.forEach((o, b) => {
        const heap = () => (dtype === 0 ? Module.HEAPF32 : Module.HEAPU16);
        runRows(
          fn,
          resolveRows(fn, length, o),
          2 * rotaryDim,
          rotaryDim,
          (r0, n, dataPtr, record) => {
            record[ROWS.out2] = dataPtr + n * rotaryDim * 4;
          },
          (ptr) => (dtype === 0 ? h.cosSin(ptr) : h.cosSinHalf(ptr, dtype)),
          (r0, n, dataPtr) => {
            const count = n * rotaryDim;
            const values = heap();
            const c0 = dataPtr >> shift;
            const s0 = (dataPtr + count * 4) >> shift;
            const at = (b * length + r0) * width;
            if (width === rotaryDim) {
              cos.set(values.subarray(c0, c0 + count), at);
              sin.set(values.subarray(s0, s0 + count), at);
              return;
            }
            for (let r = 0, i = at; r < n; r++) {
              for (let j = r * rotaryDim, end = j + width * step; j < end; j += step, i++) {
                cos[i] = values[c0 + j];
                sin[i] = values[s0 + j];
              }
            }
          },
          dtype === 0 ? (ptr) => h.cosSinStart(ptr) : null,
          // 16-bit tables are not pipelined; on the threaded build their chunks are as big as the
          // pipelined ones, so that the core splits each between the threads
          Math.max(SCRATCH_FLOATS, threadedChunk),
        );
      });
      return { cos, sin };
    }

    /**
     * { cos, sin } of [length, width] per sequence ([batch, length, width] for per-sequence offsets
     * or positions): width rotaryDim (cache 'hf', Hugging Face's) or rotaryDim / 2 ('ort', ONNX
     * Runtime's cos_cache: one value per frequency), into out's arrays when given.
     */
    rot.cosSin = function cosSin(length, options) {
      const fn = 'rotary.cosSin';
      const h = live('cosSin');
      checkNumber(fn, 'length', length, { integer: true, min: 1, max: Math.floor((2 ** 31 - 1) / rotaryDim) });
      const o = checkOptionsObject(fn, options, COS_SIN_OPTIONS);
      const ort = o.cache !== undefined && checkEnum(fn, 'cache', o.cache, CACHES) === 1;
      const tensor = o.as !== undefined && checkEnum(fn, 'as', o.as, FORMS) === 1;
      // The batch: given, else the number of offsets or the batch axis of a positions tensor.
      const p = o.positions;
      const known = o.offset !== null && typeof o.offset === 'object' ? o.offset.length
        : isTensorLike(p) && Array.isArray(p.dims) && p.dims.length === (mropeSection !== null ? 3 : 2) ? p.dims.at(-2) : undefined;
      const batch = o.batch === undefined ? known ?? 1 : checkNumber(fn, 'batch', o.batch, { integer: true, min: 1 });
      const width = ort ? rotaryDim / 2 : rotaryDim;
      const each = sequences(fn, o, batch, length);
      const size = batch * length * width;
      const dtype = checkDtype(fn, o.dtype);
      const given = o.out && {
        cos: dtype === 0 ? checkFloat32Array(fn, 'out.cos', o.out.cos) : o.out.cos,
        sin: dtype === 0 ? checkFloat32Array(fn, 'out.sin', o.out.sin) : o.out.sin,
      };
      // 16-bit tables: bits in Uint16Arrays, returned as halfOut makes them (half.js).
      const half = dtype === 0 ? null : { cos: halfOut(fn, dtype, given ? given.cos ?? null : undefined, size, 'out.cos'), sin: halfOut(fn, dtype, given ? given.sin ?? null : undefined, size, 'out.sin') };
      for (const k in given) {
        const length = half ? half[k].bits.length : given[k].length;
        if (length !== size) throw rangeError(fn, `out.${k}.length`, `batch * length * ${width} = ${size}`, length);
      }
      const written = tables(fn, h, length, each, width, half ? { cos: half.cos.bits, sin: half.sin.bits } : given, dtype);
      const result = half ? { cos: half.cos.result, sin: half.sin.result } : written;
      if (!tensor) return result;
      const d = batch === 1 && known === undefined ? [length, width] : [batch, length, width];
      const type = FLOAT_DTYPES[dtype];
      return { cos: { data: result.cos, dims: d, type }, sin: { data: result.sin, dims: [...d], type } };
    };
    return Object.freeze(ctx.guardMethods(rot, 'rotary.'));
  }

  /** One layer of a config: the layer record and its type (describeConfig), or a RangeError. */
  function describeLayer(fn, config, layer) {
    const text = configText(fn, config);
    const record = new Float64Array(Module.ROTARY_OPTION_FIELDS).fill(NaN);
    if (layer !== undefined) record[OPTION.layer] = checkNumber(fn, 'layer', layer, { integer: true, min: 0, max: 65535 });
    record[OPTION.modelRule] = 0;
    const bytes = encoder.encode(text);
    const handle = new Module.Rotary();
    try {
      return withBuffers(fn, [record.length * 8, bytes.length], (recordPtr, textPtr) => {
        Module.HEAPF64.set(record, recordPtr / 8);
        Module.HEAPU8.set(bytes, textPtr);
        if (handle.describeConfig(textPtr, bytes.length, recordPtr) !== 0) throw familyError(fn, handle);
        return { info: layerInfo(handle), layerType: handle.layerType() };
      });
    } finally {
      handle.delete();
    }
  }

  /**
   * The attention mask of one decoder layer as the model's masking code builds it: Uint8Array(q * k),
   * 1 where query i (at position offset + i) may attend to key j (at position j). Causal, sliding
   * window (kv > q - window), chunked (same chunk of attention_chunk_size), or bidirectional
   * (|q - kv| <= window where one is set). null for a linear-attention layer (no mask).
   */
  function attentionMask(config, options) {
    const fn = 'attentionMask';
    const o = checkOptionsObject(fn, options, MASK_OPTIONS);
    const queryLength = checkNumber(fn, 'queryLength', o.queryLength, { integer: true, min: 1, max: 2 ** 31 - 1 });
    const offset = o.offset === undefined ? 0 : checkNumber(fn, 'offset', o.offset, { integer: true, min: 0, max: 2 ** 31 - 1 });
    const keyLength = o.keyLength === undefined ? offset + queryLength
      : checkNumber(fn, 'keyLength', o.keyLength, { integer: true, min: 1, max: 2 ** 31 - 1 });
    if (queryLength * keyLength > 2 ** 31 - 1) {
      throw new RangeError(`posenc.${fn}: queryLength * keyLength must be at most 2^31 - 1, got ${queryLength * keyLength}`);
    }
    let window = 0;
    let chunk = 0;
    let both = false;
    if (config === null) {
      // No config: causal, with a sliding window or chunks when given.
      if (o.layer !== undefined) throw new TypeError(`posenc.${fn}: layer needs a config`);
      const size = (name) => (o[name] === undefined ? 0 : checkNumber(fn, name, o[name], { integer: true, min: 1, max: 2 ** 31 - 1 }));
      window = size('slidingWindow');
      chunk = size('chunkSize');
    } else {
      const extra = o.slidingWindow !== undefined ? 'slidingWindow' : o.chunkSize !== undefined ? 'chunkSize' : null;
      if (extra) throw new TypeError(`posenc.${fn}: ${extra} comes from the config (give config null to set it)`);
      const { info } = describeLayer(fn, config, o.layer);
      if (info[LAYER.linearAttention] === 1) return null;
      window = info[LAYER.slidingWindow];
      chunk = info[LAYER.attentionChunk];
      both = info[LAYER.bidirectional] === 1;
    }
    const mask = new Uint8Array(queryLength * keyLength);
    for (let i = 0; i < queryLength; i++) {
      const q = offset + i;
      // The keys a query sees: [from, to] (masking_utils: causal kv <= q; sliding kv > q - window;
      // chunked kv // chunk == q // chunk; bidirectional |q - kv| <= window, or every key).
      let to = both ? keyLength - 1 : Math.min(q, keyLength - 1);
      let from = 0;
      if (window > 0) from = both ? q - window : q - window + 1;
      if (both && window > 0) to = Math.min(keyLength - 1, q + window);
      if (chunk > 0) from = Math.max(from, q - (q % chunk));
      if (from < 0) from = 0;
      if (from <= to) mask.fill(1, i * keyLength + from, i * keyLength + to + 1);
    }
    return mask;
  }

  /**
   * Llama 4's NoPE-layer query temperature at positions offset .. offset + length - 1, as
   * Llama4TextAttention computes it in float32: log1p(floor((p + 1) / floor_scale)) * attn_scale + 1.
   * null for a layer without one.
   */
  function queryScales(config, options) {
    const fn = 'queryScales';
    const o = checkOptionsObject(fn, options, SCALE_OPTIONS);
    const length = checkNumber(fn, 'length', o.length, { integer: true, min: 1, max: 2 ** 31 - 1 });
    const offset = o.offset === undefined ? 0 : checkNumber(fn, 'offset', o.offset, { integer: true, min: 0, max: 2 ** 31 - 1 });
    if (offset + length - 1 > 2 ** 31 - 1) throw new RangeError(`posenc.${fn}: offset + length - 1 must be at most 2^31 - 1`);
    const { info } = describeLayer(fn, config, o.layer);
    if (info[LAYER.queryTemperature] !== 1) return null;
    const f = Math.fround;
    const floorScale = f(info[LAYER.floorScale]);
    const attnScale = f(info[LAYER.attnScale]);
    const out = new Float32Array(length);
    for (let i = 0; i < length; i++) {
      const k = Math.floor(f(f(f(offset + i) + 1) / floorScale));
      out[i] = f(f(f(Math.log1p(k)) * attnScale) + 1);
    }
    return out;
  }

  api.rotary = newRotary;
  api.attentionMask = attentionMask;
  api.queryScales = queryScales;
  api.rotaryPresets = ROTARY_PRESETS;
  // The model types whose config.json pe.rotary reads, each with its rule (cpp/src/rotary/models.cpp;
  // the core gives the rule's enum values, worded here).
  const modelTypes = [];
  for (let i = 0, n = Module.rotaryModelRuleCount(); i < n; i++) {
    const [modelType, family, layout, head, rope, types, multimodal, partial] = Module.rotaryModelRule(i).split(' ');
    modelTypes.push(Object.freeze({
      modelType,
      family,
      layout: ROTARY_LAYOUTS[layout],
      headDim: RULE_WORDS.head[head],
      partialRotaryFactor: Number(partial),
      layers: RULE_WORDS.rope[rope],
      attention: RULE_WORDS.types[types],
      multimodal: RULE_WORDS.multimodal[multimodal],
    }));
  }
  api.rotaryModelTypes = Object.freeze(modelTypes);
}
