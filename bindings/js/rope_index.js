// Multimodal RoPE (M-RoPE) position ids of Qwen-VL models: pe.ropeIndex(config, options), the
// (temporal, height, width) position of every token and the rope delta of every sequence, as
// Hugging Face transformers' get_rope_index computes them. Pure JavaScript: integer bookkeeping.
//
// Ported (re-written, not copied) from huggingface/transformers, main branch (the
// mm_token_type_ids form of get_rope_index, after PRs #45330, #45400, #46861 and #48669):
//   src/transformers/models/qwen2_vl/modeling_qwen2_vl.py       Qwen2VLModel.get_rope_index,
//                                                              Qwen2VLModel.get_vision_position_ids
//   src/transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py   Qwen2_5_VLModel.get_rope_index (video
//       time: tokens_per_second * second_per_grid_t, float32, times the frame index, then .long())
//   src/transformers/models/qwen3_vl/modeling_qwen3_vl.py       Qwen3VLModel.get_rope_index (each video
//       split into frames of t = 1, separated by timestamp text); qwen3_vl_moe inherits it
//   src/transformers/models/qwen2_vl/processing_qwen2_vl.py     Qwen2VLProcessor.__call__ (the
//       mm_token_type_ids: 1 where the id is image_token_id, 2 where it is video_token_id, else 0)
// The text-only path (no grid given) is the else branch of the earlier get_rope_index (v4.x):
// cumsum(mask) - 1 with padding at 1 and delta max + 1 - L, or arange and delta 0.

import { checkNumber, checkNumberList, checkOptionsObject, float64Entries, rangeError, typeError } from './check.js';
import {
  INT32_MAX, INT32_MIN, integerOutput, isTensorLike, readIntegers, readOutputOptions, readTensor,
} from './tensor.js';

const FN = 'ropeIndex';
const OPTIONS = new Set([
  'inputIds', 'imageGridThw', 'videoGridThw', 'secondPerGridTs', 'attentionMask', 'dtype', 'as',
]);
/** A RangeError of ropeIndex: `posenc.ropeIndex: <message>`. */
const fail = (message) => new RangeError(`posenc.${FN}: ${message}`);

/** The model types whose get_rope_index is ported: timed = Qwen2.5-VL's video time, frames = Qwen3-VL's split. */
const MODELS = {
  qwen2_vl: { timed: false, frames: false },
  qwen2_5_vl: { timed: true, frames: false },
  qwen3_vl: { timed: false, frames: true },
  qwen3_vl_moe: { timed: false, frames: true },
};
export const ROPE_INDEX_MODEL_TYPES = Object.keys(MODELS);

// config.json -> what get_rope_index reads: the placeholder ids (top level, else text_config), the
// vision tower's spatial_merge_size and (Qwen2.5-VL) tokens_per_second.
function readConfig(config) {
  if (typeof config !== 'object' || config === null || Array.isArray(config) || ArrayBuffer.isView(config)) {
    throw typeError(FN, 'config', "an object (a model's config.json)", config);
  }
  const modelType = config.model_type;
  if (!Object.hasOwn(MODELS, modelType)) {
    throw rangeError(FN, 'config.model_type', `one of '${ROPE_INDEX_MODEL_TYPES.join("', '")}'`, modelType);
  }
  const object = (value) => (typeof value === 'object' && value !== null ? value : {});
  const text = object(config.text_config);
  const vision = object(config.vision_config);
  const required = (value, key, range) => {
    if (value === undefined || value === null) throw rangeError(FN, `config.${key}`, range.what, value);
    return checkNumber(FN, `config.${key}`, value, range);
  };
  const tokenId = { integer: true, min: INT32_MIN, max: INT32_MAX, what: 'an integer token id' };
  const spec = {
    ...MODELS[modelType],
    imageId: required(config.image_token_id ?? text.image_token_id, 'image_token_id', tokenId),
    videoId: required(config.video_token_id ?? text.video_token_id, 'video_token_id', tokenId),
    merge: required(vision.spatial_merge_size, 'vision_config.spatial_merge_size', {
      integer: true, min: 1, max: 65536, what: 'an integer from 1 to 65536',
    }),
    tokensPerSecond: 0,
  };
  if (spec.timed) {
    spec.tokensPerSecond = required(vision.tokens_per_second, 'vision_config.tokens_per_second', {
      min: 0, max: 2 ** 24, what: 'a finite number from 0 to 16777216',
    });
  }
  return spec;
}

// [t, h, w] rows: an Array of triples, 3n integers, or a tensor of dims [n, 3]; h and w multiples of
// the merge size (the vision tower merges merge x merge patches into one token).
function readGrids(name, value, merge) {
  if (value === undefined || value === null) return null;
  const { values, dims } = readIntegers(FN, name, value, { min: 1, max: INT32_MAX });
  if (!(dims.length === 2 && dims[1] === 3) && !(dims.length === 1 && dims[0] % 3 === 0)) {
    throw fail(`${name} must have dims [n, 3] (a [t, h, w] row per item) or hold 3n integers, got dims [${dims}]`);
  }
  for (let i = 0; i < values.length; i += 3) {
    if (values[i + 1] % merge !== 0 || values[i + 2] % merge !== 0) {
      const row = values.subarray(i, i + 3);
      throw fail(`${name}[${i / 3}] must have h and w divisible by spatial_merge_size ${merge}, got [${row}]`);
    }
  }
  return values;
}

// Seconds per temporal patch of each video (Qwen2.5-VL's processor: temporal_patch_size / fps), as
// the float32 tensor the processor returns.
function readSeconds(value, videos) {
  const list = isTensorLike(value) ? readTensor(FN, 'secondPerGridTs', value).data : value;
  checkNumberList(FN, 'secondPerGridTs', list, videos, { per: 'video' });
  const seconds = float64Entries(FN, 'secondPerGridTs', list, videos, {
    min: 0, max: Number.MAX_VALUE, expected: 'a finite number at least 0 (seconds per temporal patch)',
  });
  return seconds.map(Math.fround);
}

const sameDims = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * Position ids of a (batch of) token sequence(s) for M-RoPE, as HF's get_rope_index computes them.
 * config: the model's config.json object. options: { inputIds, imageGridThw, videoGridThw,
 * secondPerGridTs, attentionMask, dtype, as }. One sequence ([L]) gives { positions (3 * L: the
 * t row, the h row, the w row), ropeDelta }; a batch ([B, L]) gives { positions (3 * B * L, HF's
 * [3, B, L] order), ropeDeltas (B) }.
 */
export function ropeIndex(config, options) {
  const spec = readConfig(config);
  const o = checkOptionsObject(FN, options, OPTIONS);
  const output = readOutputOptions(FN, o);
  const ids = readIntegers(FN, 'inputIds', o.inputIds);
  const batched = ids.dims.length === 2;
  if (ids.dims.length > 2) throw fail(`inputIds must have dims [L] or [B, L], got [${ids.dims}]`);
  const B = batched ? ids.dims[0] : 1;
  const L = batched ? ids.dims[1] : ids.dims[0];
  if (B * L === 0) throw fail(`inputIds must hold at least one token, got dims [${ids.dims}]`);
  let mask = null;
  if (o.attentionMask !== undefined && o.attentionMask !== null) {
    const m = readIntegers(FN, 'attentionMask', o.attentionMask, { min: 0, max: 1 });
    if (!sameDims(m.dims, ids.dims)) {
      throw fail(`attentionMask must have the dims of inputIds [${ids.dims}], got [${m.dims}]`);
    }
    mask = m.values;
  }
  const images = readGrids('imageGridThw', o.imageGridThw, spec.merge);
  const videos = readGrids('videoGridThw', o.videoGridThw, spec.merge);
  let seconds = null;
  if (o.secondPerGridTs !== undefined && o.secondPerGridTs !== null) {
    if (!spec.timed) throw new TypeError(`posenc.${FN}: secondPerGridTs applies only to model_type 'qwen2_5_vl'`);
    seconds = readSeconds(o.secondPerGridTs, videos ? videos.length / 3 : 0);
  }

  const runs = findRuns(spec, ids.values, mask, B, L);
  const { positions, deltas } =
    images || videos
      ? multimodalPositions(spec, runs, { images, videos, seconds }, B, L)
      : textPositions(runs, mask, B, L);

  const out = (name, values, dims) => integerOutput(FN, name, values, dims, output);
  return batched
    ? { positions: out('positions', positions, [3, B, L]), ropeDeltas: out('ropeDeltas', deltas, [B, 1]) }
    : { positions: out('positions', positions, [3, L]), ropeDelta: deltas[0] };
}

// The kept tokens of each sequence (mask 1, or all) and their runs of one mm_token_type (0 text,
// 1 image, 2 video), as itertools.groupby forms them: { kept: token indices, runs: [type, from, n] }.
function findRuns(spec, ids, mask, B, L) {
  const sequences = [];
  for (let b = 0; b < B; b++) {
    const kept = [];
    const runs = [];
    for (let j = 0; j < L; j++) {
      if (mask && mask[b * L + j] === 0) continue;
      const id = ids[b * L + j];
      // The processor sets 1 for image tokens, then 2 for video tokens (the later write wins).
      const type = id === spec.videoId ? 2 : id === spec.imageId ? 1 : 0;
      const last = runs[runs.length - 1];
      if (last && last[0] === type) last[2]++;
      else runs.push([type, kept.length, 1]);
      kept.push(j);
    }
    sequences.push({ kept, runs });
  }
  return sequences;
}

function countRuns(sequences, type) {
  let n = 0;
  for (const { runs } of sequences) for (const run of runs) n += run[0] === type ? 1 : 0;
  return n;
}

// What the grids stand for: one item per run of image or video tokens ([t, h, w, source row,
// frame]). Qwen3-VL splits each video into t frames of t = 1 (repeat_interleave over t).
function gridItems(spec, sequences, grids, type) {
  const name = type === 1 ? 'imageGridThw' : 'videoGridThw';
  const want = countRuns(sequences, type);
  const items = [];
  const rows = grids ? grids.length / 3 : 0;
  for (let r = 0; r < rows; r++) {
    const [t, h, w] = grids.subarray(3 * r, 3 * r + 3);
    if (type === 2 && spec.frames) for (let f = 0; f < t; f++) items.push([1, h, w, r, f]);
    else items.push([t, h, w, r, -1]);
  }
  if (items.length !== want) {
    const got = grids ? items.length : 'none';
    const what = type === 2 && spec.frames
      ? `frames (t) adding up to ${want} (one per run of video tokens in inputIds: ` +
        'Qwen3-VL gives each frame its own run)'
      : `${want} ${want === 1 ? 'row' : 'rows'} (one per run of ${type === 1 ? 'image' : 'video'} tokens in inputIds)`;
    throw fail(`${name} must have ${what}, got ${got}`);
  }
  return items;
}

// get_rope_index's vision + text path: text runs count on from the running position; a vision run
// of grid (t, h, w) gets (start + time(i), start + row, start + column) over its t x h/m x w/m
// tokens (get_vision_position_ids), then the running position moves on by max(h, w) / m. Padding
// (mask 0) stays 0; each delta is the largest position + 1 - the number of kept tokens.
function multimodalPositions(spec, sequences, { images, videos, seconds }, B, L) {
  const empty = sequences.findIndex(({ kept }) => kept.length === 0);
  if (empty >= 0) {
    throw fail(`attentionMask must keep at least one token of each sequence (sequence ${empty} has none)`);
  }
  const items = { 1: gridItems(spec, sequences, images, 1), 2: gridItems(spec, sequences, videos, 2) };
  const next = { 1: 0, 2: 0 };
  const positions = new Float64Array(3 * B * L);
  const deltas = new Float64Array(B);
  const plane = B * L;
  for (let b = 0; b < B; b++) {
    const { kept, runs } = sequences[b];
    const put = (k, t, h, w) => {
      const at = b * L + kept[k];
      positions[at] = t;
      positions[plane + at] = h;
      positions[2 * plane + at] = w;
    };
    let pos = 0;
    let max = -Infinity;
    for (const [type, from, n] of runs) {
      if (type === 0) {
        for (let k = 0; k < n; k++) put(from + k, pos + k, pos + k, pos + k);
        max = Math.max(max, pos + n - 1);
        pos += n;
        continue;
      }
      const [t, h, w, row, frame] = items[type][next[type]++];
      const gh = h / spec.merge;
      const gw = w / spec.merge;
      if (t * gh * gw !== n) {
        const name = type === 1 ? 'imageGridThw' : 'videoGridThw';
        const part = frame >= 0 ? ` frame ${frame}` : '';
        const grid = gridRow(type === 1 ? images : videos, row);
        const per = frame >= 0 ? ' per frame' : '';
        throw fail(
          `${name}[${row}] = [${grid}]${part} stands for ${count(t * gh * gw)} (t * h/${spec.merge} * w/${spec.merge}${per}), ` +
            `but its run of ${type === 1 ? 'image' : 'video'} tokens (sequence ${b}, from token ${kept[from]}) has ${n}`,
        );
      }
      const time = temporalOffsets(spec, type, t, seconds ? seconds[row] : null);
      let k = from;
      for (let i = 0; i < t; i++) {
        for (let y = 0; y < gh; y++) for (let x = 0; x < gw; x++) put(k++, pos + time[i], pos + y, pos + x);
      }
      const top = pos + Math.max(time[t - 1], gh - 1, gw - 1);
      if (!Number.isSafeInteger(top)) {
        throw fail(`videoGridThw[${row}]'s temporal positions pass 2^53 (tokens_per_second * secondPerGridTs[${row}] too large)`);
      }
      max = Math.max(max, top);
      pos += Math.max(h, w) / spec.merge;
    }
    deltas[b] = max + 1 - kept.length;
  }
  return { positions, deltas };
}

const gridRow = (grids, row) => grids.subarray(3 * row, 3 * row + 3);
const count = (n) => `${n} token${n === 1 ? '' : 's'}`;

// The temporal offset of each of a grid's t frames. Images and Qwen2-VL / Qwen3-VL videos: the
// frame index. Qwen2.5-VL videos: (arange(t) * time_interval).long() with time_interval =
// tokens_per_second * second_per_grid_t, a float32 scalar times the frame index in float32, then
// truncated; without secondPerGridTs, HF's default 1 keeps tokens_per_second * i exact.
function temporalOffsets(spec, type, t, seconds) {
  const time = new Float64Array(t);
  const timed = type === 2 && spec.timed;
  const tps = spec.tokensPerSecond;
  if (timed && (seconds !== null || !Number.isInteger(tps))) {
    const interval = Math.fround(Math.fround(tps) * (seconds ?? 1));
    for (let i = 0; i < t; i++) time[i] = Math.trunc(Math.fround(Math.fround(i) * interval));
  } else {
    const step = timed ? tps : 1;
    for (let i = 0; i < t; i++) time[i] = i * step;
  }
  return time;
}

// No grid: every token is text. With a mask, cumsum(mask) - 1 on kept tokens and 1 on padding,
// delta = the row's largest position + 1 - L; without, 0..L-1 and delta 0.
function textPositions(sequences, mask, B, L) {
  for (let b = 0; b < B; b++) {
    for (const [type] of sequences[b].runs) {
      if (type !== 0) {
        const name = type === 1 ? 'imageGridThw' : 'videoGridThw';
        throw fail(`${name} must be given: inputIds holds ${type === 1 ? 'image' : 'video'} tokens (sequence ${b})`);
      }
    }
  }
  const positions = new Float64Array(3 * B * L);
  const deltas = new Float64Array(B);
  const plane = B * L;
  for (let b = 0; b < B; b++) {
    let count = 0;
    let max = -Infinity;
    for (let j = 0; j < L; j++) {
      let p = j;
      if (mask) {
        count += mask[b * L + j];
        p = mask[b * L + j] === 0 ? 1 : count - 1;
        max = Math.max(max, p);
      }
      positions[b * L + j] = p;
      positions[plane + b * L + j] = p;
      positions[2 * plane + b * L + j] = p;
    }
    deltas[b] = mask ? max + 1 - L : 0;
  }
  return { positions, deltas };
}
