// The 2D RoPE of vision towers: rotary2d(pe, options) of posenc/multimodal. A patch at (row h,
// column w) turns the first half of its frequencies by h and the second half by w (rotate-half over
// the whole head). The rotation is the instance's pe.rotary({ headDim, base, vision2d }), the core's
// multimodal RoPE on rows h and w of three (cpp/include/posenc/rotary/spec.hpp, VisionRope); this
// module, plain JavaScript that only apps running a vision tower load, reads the config and lays out
// the patches' positions.
//
// Ported (re-written from reading, not copied) from huggingface/transformers:
//   src/transformers/models/qwen2_vl/modeling_qwen2_vl.py
//     VisionRotaryEmbedding (inv_freq = 1 / theta^(arange(0, dim, 2) / dim), dim = head_dim / 2,
//     theta 10000), Qwen2VisionTransformerPretrainedModel.rot_pos_emb (per grid [t, h, w]: h and w
//     positions in spatial_merge_size x spatial_merge_size blocks, row-major blocks, patches
//     row-major inside a block, t times), apply_rotary_pos_emb_vision (rotate_half);
//     head_dim = embed_dim // num_heads
//   src/transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py
//     the same rot_pos_emb; get_window_index (merged tokens in windows of window_size //
//     spatial_merge_size // patch_size per side, windows row-major, padding dropped) and the
//     reordering of rotary_pos_emb by it; head_dim = hidden_size // num_heads
//   src/transformers/models/pixtral/modeling_pixtral.py
//     PixtralRotaryEmbedding (freqs = 1 / rope_theta^(arange(0, head_dim, 2) / head_dim); rows take
//     freqs[0::2], columns freqs[1::2]; max_patches_per_side = image_size // patch_size),
//     position_ids_in_meshgrid (patches row-major)

import { checkEnum, checkFloat32Array, checkNumber, checkOptionsObject, describe, parseConfig, typeError } from './check.js';
import { readIntegers } from './tensor.js';

const MODELS = ['qwen2_vl', 'qwen2_5_vl', 'pixtral'];
/** The vision towers rotary2d reads (model_type of the config or of its vision_config). */
export const ROTARY2D_MODELS = Object.freeze([...MODELS]);
const OPTIONS = new Set(['config', 'model', 'headDim', 'base', 'spatialMergeSize', 'windowSize', 'patchSize']);
const GRID_OPTIONS = new Set(['heads', 'gridThw', 'order', 'height', 'width']);
const ORDERS = ['patch', 'window'];
const MAX_SIDE = 65536;

const fail = (fn, message) => new RangeError(`posenc.${fn}: ${message}`);

/** A config (object or JSON text) and the object its vision keys are in. */
function readConfig(fn, config) {
  const c = parseConfig(fn, config, "a model's config.json object (or its vision_config, or JSON text)");
  const vision = c.vision_config;
  const inner = vision !== null && typeof vision === 'object' && !Array.isArray(vision);
  return { vision: inner ? vision : c, prefix: inner ? 'config.vision_config.' : 'config.', types: [inner ? vision.model_type : undefined, c.model_type] };
}

/** rotary2d(pe, options): a vision tower's 2D RoPE on the posenc instance pe (from init()). */
export function rotary2d(pe, options) {
  const fn = 'rotary2d';
  if (pe === null || typeof pe !== 'object' || typeof pe.rotary !== 'function') {
    throw typeError(fn, 'pe', 'a posenc instance (await init())', pe);
  }
  const o = checkOptionsObject(fn, options, OPTIONS);
  let v = {};
  let prefix = 'config.';
  let model = o.model;
  if (o.config !== undefined) {
    const c = readConfig(fn, o.config);
    v = c.vision;
    prefix = c.prefix;
    if (model === undefined) model = c.types.find((t) => MODELS.includes(t));
  }
  if (model === undefined) {
    throw typeError(fn, 'model', `one of '${MODELS.join("', '")}' (the config does not say which vision tower)`, undefined);
  }
  const m = checkEnum(fn, 'model', model, MODELS);
  const qwen = m < 2;
  // A number from the options, else the config's key; missing from both is an error naming both.
  const setting = (name, key, fallback, { min = 1, max = MAX_SIDE, integer = true } = {}) => {
    if (o[name] !== undefined) return checkNumber(fn, name, o[name], { integer, min, max });
    const value = v[key];
    if (value === undefined || value === null) {
      if (fallback !== undefined) return fallback;
      throw fail(fn, `${name} must be given, or ${prefix}${key}, got undefined`);
    }
    if (typeof value !== 'number' || (integer && !Number.isInteger(value)) || !(value >= min && value <= max)) {
      throw fail(fn, `${prefix}${key} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${describe(value)}`);
    }
    return value;
  };
  let headDim;
  if (o.headDim !== undefined) {
    headDim = checkNumber(fn, 'headDim', o.headDim, { integer: true, min: 4, max: 65536 });
  } else {
    const width = m === 0 ? 'embed_dim' : 'hidden_size';
    const heads = qwen ? 'num_heads' : 'num_attention_heads';
    headDim = !qwen && v.head_dim != null
      ? setting('headDim', 'head_dim')
      : Math.floor(setting('headDim', width, undefined, { max: 2 ** 24 }) / setting('headDim', heads));
  }
  if (headDim % 4 !== 0) throw fail(fn, `headDim must be a multiple of 4 (h and w take half of the pairs each), got ${headDim}`);
  let base = 10000; // VisionRotaryEmbedding's theta; PixtralVisionConfig's rope_theta default
  if (o.base !== undefined) {
    base = checkNumber(fn, 'base', o.base, { above: 1 });
  } else if (!qwen) {
    const theta = v.rope_theta ?? v.rope_parameters?.rope_theta;
    if (theta != null) {
      if (typeof theta !== 'number' || !(theta > 1) || !Number.isFinite(theta)) {
        throw fail(fn, `${prefix}rope_theta must be a finite number > 1, got ${describe(theta)}`);
      }
      base = theta;
    }
  }
  // Qwen2VLVisionConfig / Qwen2_5_VLVisionConfig defaults where a key is absent: spatial_merge_size 2,
  // window_size 112, patch_size 14.
  const merge = qwen ? setting('spatialMergeSize', 'spatial_merge_size', 2) : 1;
  // Qwen2.5-VL's windows, in merged tokens per side.
  const windowTokens = m === 1 ? Math.floor(setting('windowSize', 'window_size', 112) / merge / setting('patchSize', 'patch_size', 14)) : 0;
  if (m === 1 && windowTokens < 1) throw fail(fn, `windowSize / spatialMergeSize / patchSize must be at least 1 (merged tokens per window side), got ${windowTokens}`);
  // Pixtral's buffer holds max_patches_per_side^2 positions: a larger side would alias.
  const maxSide = !qwen && v.image_size != null && v.patch_size != null ? Math.floor(v.image_size / v.patch_size) : MAX_SIDE;

  const rot = pe.rotary({ headDim, base, vision2d: qwen ? 'qwen' : 'pixtral' });

  // The last call's grid and its rows: a vision tower calls apply for q and k of every layer with
  // the same grid. Nothing writes into the rows (rot.apply and cosSin copy them into wasm memory).
  let last = { key: '', rows: null };
  const remember = (key, rows) => (last = { key, rows }).rows;

  /** The patches' [t, h, w] rows (t all 0) of a call, as one Float64Array of 3 * patches. */
  function positions(name, g) {
    if (qwen) {
      if (g.height !== undefined || g.width !== undefined) throw new TypeError(`posenc.${name}: ${MODELS[m]} takes gridThw, not height and width`);
      const { values, dims } = readIntegers(name, 'gridThw', g.gridThw, { min: 1, max: MAX_SIDE });
      if (values.length === 0 || values.length % 3 !== 0 || (dims.length === 2 && dims[1] !== 3)) {
        throw fail(name, `gridThw must be rows [t, h, w] (an Array of triples, or 3 * images integers), got dims [${dims}]`);
      }
      const order = g.order === undefined ? 0 : checkEnum(name, 'order', g.order, ORDERS);
      if (order === 1 && m !== 1) throw fail(name, `order 'window' is Qwen2.5-VL's (model 'qwen2_5_vl'), not ${MODELS[m]}'s`);
      let count = 0;
      for (let i = 0; i < values.length; i += 3) {
        for (const [k, side] of [[1, 'h'], [2, 'w']]) {
          if (values[i + k] % merge !== 0) {
            throw fail(name, `gridThw[${i / 3}] ${side} must be a multiple of spatialMergeSize ${merge}, got ${values[i + k]}`);
          }
        }
        count += values[i] * values[i + 1] * values[i + 2];
      }
      if (count > 2 ** 26) throw fail(name, `gridThw gives ${count} patches, more than 2^26`);
      const key = `${order} ${values}`;
      if (key === last.key) return last.rows;
      const out = new Float64Array(3 * count);
      let p = 0;
      const put = (row, col) => {
        out[count + p] = row;
        out[2 * count + p++] = col;
      };
      for (let i = 0; i < values.length; i += 3) {
        const [t, h, w] = [values[i], values[i + 1], values[i + 2]];
        const [lh, lw] = [h / merge, w / merge];
        // merged token (r, c): its merge x merge patches row-major
        const block = (r, c) => {
          for (let a = 0; a < merge; a++) for (let b = 0; b < merge; b++) put(r * merge + a, c * merge + b);
        };
        for (let f = 0; f < t; f++) {
          if (order === 0) {
            for (let r = 0; r < lh; r++) for (let c = 0; c < lw; c++) block(r, c);
          } else {
            // get_window_index: windows of windowTokens x windowTokens merged tokens, row-major.
            for (let wr = 0; wr < lh; wr += windowTokens) {
              for (let wc = 0; wc < lw; wc += windowTokens) {
                for (let r = wr; r < Math.min(wr + windowTokens, lh); r++) {
                  for (let c = wc; c < Math.min(wc + windowTokens, lw); c++) block(r, c);
                }
              }
            }
          }
        }
      }
      return remember(key, out);
    }
    if (g.gridThw !== undefined || g.order !== undefined) throw new TypeError(`posenc.${name}: pixtral takes height and width (patches), not ${g.gridThw !== undefined ? 'gridThw' : 'order'}`);
    const h = checkNumber(name, 'height', g.height, { integer: true, min: 1, max: maxSide });
    const w = checkNumber(name, 'width', g.width, { integer: true, min: 1, max: maxSide });
    if (h * w > 2 ** 26) throw fail(name, `height * width must be at most 2^26 patches, got ${h * w}`);
    const count = h * w;
    if (last.key === `${h} ${w}`) return last.rows;
    const out = new Float64Array(3 * count);
    for (let i = 0; i < h; i++) {
      for (let j = 0; j < w; j++) {
        out[count + i * w + j] = i;
        out[2 * count + i * w + j] = j;
      }
    }
    return remember(`${h} ${w}`, out);
  }

  const r2d = {
    model: MODELS[m],
    headDim,
    base,
    spatialMergeSize: qwen ? merge : null,
    windowTokens: m === 1 ? windowTokens : null,
    maxPatchesPerSide: qwen || maxSide === MAX_SIDE ? null : maxSide,
    get inverseFrequencies() {
      return rot.inverseFrequencies;
    },
    get disposed() {
      return rot.disposed;
    },
    /** The patches' h and w positions of a call, in its order: { h, w } (Int32Array each). */
    positions(grid) {
      const three = positions('rotary2d.positions', checkOptionsObject('rotary2d.positions', grid, GRID_OPTIONS));
      const n = three.length / 3;
      return { h: Int32Array.from(three.subarray(n, 2 * n)), w: Int32Array.from(three.subarray(2 * n)) };
    },
    /** Rotates x, [patches, heads, headDim] float32, in place; returns x. */
    apply(x, grid) {
      const name = 'rotary2d.apply';
      const g = checkOptionsObject(name, grid, GRID_OPTIONS);
      if (g.heads === undefined) throw typeError(name, 'heads', 'an integer number (x is [patches, heads, headDim])', undefined);
      checkNumber(name, 'heads', g.heads, { integer: true, min: 1, max: 65536 });
      checkFloat32Array(name, 'x', x);
      const three = positions(name, g);
      const need = (three.length / 3) * g.heads * headDim;
      if (x.length !== need) {
        throw fail(name, `x must hold patches * heads * headDim = ${three.length / 3} * ${g.heads} * ${headDim} = ${need} floats, got ${x.length}`);
      }
      return rot.apply(x, { heads: g.heads, positions: three });
    },
    /** { cos, sin }: Float32Array(patches * headDim) each, HF's layout. */
    cosSin(grid) {
      const name = 'rotary2d.cosSin';
      const g = checkOptionsObject(name, grid, GRID_OPTIONS);
      if (g.heads !== undefined) throw new TypeError(`posenc.${name}: heads goes with apply`);
      const three = positions(name, g);
      return rot.cosSin(three.length / 3, { positions: three });
    },
    dispose() {
      rot.dispose();
    },
    [Symbol.dispose]() {
      rot.dispose();
    },
  };
  return Object.freeze(r2d);
}
