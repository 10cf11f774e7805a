// pe.encoderLayer({ config, weights }): PyTorch's nn.TransformerEncoderLayer from its state_dict,
// over the core's layer (core.js). Arguments are checked here (TypeError / RangeError naming the
// argument); data is copied into wasm memory for one call and out into new JS-owned arrays.

import {
  checkBoolean,
  checkEnum,
  checkNumber,
  checkNumberList,
  checkFlags,
  checkOptionsObject,
  checkTypedArray,
  describe,
  float64Entries,
  isTensorLike,
  readTensor,
  typeError,
} from './check.js';
import { ownHandle } from './lifetime.js';

const LAYER_OPTIONS = new Set(['config', 'weights']);
const CONFIG_FIELDS = new Set([
  'dModel', 'heads', 'ffDim', 'normFirst', 'activation', 'layerNormEps',
  'position', 'ropeTheta', 'rotaryDim', 'rotaryLayout', 'alibiMode',
]);
const LAYER_FORWARD_OPTIONS = new Set(['causal', 'keyPaddingMask', 'positionOffset', 'positions']);

/** The position step's names, in the core's enum order (bind_nn.cpp). */
export const POSITION_METHODS = Object.freeze(['none', 'rotary', 'alibi']);
export const ROTARY_LAYOUTS = Object.freeze(['half', 'interleaved']);
export const ALIBI_MODES = Object.freeze(['causal', 'symmetric']);
/** The largest |position| a forward accepts (kMaxLayerPosition, 2^31 - 1). */
export const MAX_LAYER_POSITION = 2147483647;

const ROTARY_FIELDS = ['ropeTheta', 'rotaryDim', 'rotaryLayout'];
const ALIBI_FIELDS = ['alibiMode'];

/**
 * The position step of a layer config: { position, ropeTheta, rotaryDim, rotaryLayout, alibiMode }.
 * Rotary fields are refused unless position is 'rotary', alibiMode unless it is 'alibi'.
 */
function checkPosition(fn, config, headDim) {
  const position = POSITION_METHODS[checkEnum(fn, 'config.position', config.position ?? 'none', POSITION_METHODS)];
  for (const field of [...ROTARY_FIELDS, ...ALIBI_FIELDS]) {
    const owner = ROTARY_FIELDS.includes(field) ? 'rotary' : 'alibi';
    if (config[field] != null && position !== owner) {
      throw new TypeError(`posenc.${fn}: config.${field} applies to position '${owner}' only (position is '${position}')`);
    }
  }
  const ropeTheta = checkNumber(fn, 'config.ropeTheta', config.ropeTheta ?? 10000, { above: 1, max: Number.MAX_VALUE });
  const rotaryDim = checkNumber(fn, 'config.rotaryDim', config.rotaryDim ?? 0, { integer: true, min: 0, max: headDim });
  if (rotaryDim % 2 !== 0) {
    throw new RangeError(`posenc.${fn}: config.rotaryDim must be even (0 = the whole head of ${headDim}), got ${rotaryDim}`);
  }
  if (position === 'rotary' && rotaryDim === 0 && headDim % 2 !== 0) {
    throw new RangeError(`posenc.${fn}: rotary needs an even head size (dModel / heads = ${headDim}) or an even config.rotaryDim`);
  }
  const rotaryLayout = ROTARY_LAYOUTS[checkEnum(fn, 'config.rotaryLayout', config.rotaryLayout ?? 'half', ROTARY_LAYOUTS)];
  const alibiMode = ALIBI_MODES[checkEnum(fn, 'config.alibiMode', config.alibiMode ?? 'causal', ALIBI_MODES)];
  return { position, ropeTheta, rotaryDim, rotaryLayout, alibiMode };
}

/** A finite position offset (>= `min`), 0 when absent. */
export function positionOffset(fn, value, min = -MAX_LAYER_POSITION) {
  if (value === undefined) return 0;
  return checkNumber(fn, 'positionOffset', value, { min, max: MAX_LAYER_POSITION });
}

/** The RangeError of a failed layer or model call: `posenc.<fn>: <prefix><name>: <message>`. */
export function layerError(fn, handle, prefix = '') {
  const { argument, message } = handle.error();
  return new RangeError(`posenc.${fn}: ${prefix}${argument ? `${argument}: ` : ''}${message}`);
}

/**
 * A key-padding mask as bytes (1 = hide that key), or null. An Array or any non-BigInt typed
 * array of `length` entries, each 0, 1, false or true, as for the encoding's paddingMask.
 */
export function maskBytes(fn, mask, length) {
  if (mask === undefined || mask === null) return null;
  const list = checkNumberList(fn, 'keyPaddingMask', mask, length, {
    per: 'token',
    expected: 'an Array or typed array of 0/1 or booleans',
  });
  return checkFlags(fn, 'keyPaddingMask', list, '1 = hide that key');
}

/** The explicit row positions of a layer forward as float64, or null (then positionOffset + row). */
function rowPositions(fn, o, length) {
  if (o.positions === undefined || o.positions === null) return null;
  if (o.positionOffset !== undefined) {
    throw new TypeError(`posenc.${fn}: give positions or positionOffset, not both`);
  }
  const list = checkNumberList(fn, 'positions', o.positions, length);
  return float64Entries(fn, 'positions', list, length, {
    min: -MAX_LAYER_POSITION,
    max: MAX_LAYER_POSITION,
    expected: `a finite number from -${MAX_LAYER_POSITION} to ${MAX_LAYER_POSITION}`,
  });
}

/** A copy of `count` floats of attention probabilities at ptr, or null when there are none. */
export function copyAttention(Module, ptr, count) {
  if (!ptr || count === 0) return null;
  return Module.HEAPF32.slice(ptr >> 2, (ptr >> 2) + count);
}

/** Adds encoderLayer to `api` (ctx: see api.js). */
export function attachLayerApi(api, ctx) {
  const { Module, core, withBuffers } = ctx;
  const { maxModelDim, maxHeads, maxFfDim, maxSequenceLength } = core.limits;

  function checkConfig(fn, given) {
    if (given === undefined) throw typeError(fn, 'config', 'an object', given);
    const config = checkOptionsObject(fn, given, CONFIG_FIELDS, 'config');
    const dModel = checkNumber(fn, 'config.dModel', config.dModel, { integer: true, min: 1, max: maxModelDim });
    const heads = checkNumber(fn, 'config.heads', config.heads, { integer: true, min: 1, max: maxHeads });
    const ffDim = checkNumber(fn, 'config.ffDim', config.ffDim, { integer: true, min: 1, max: maxFfDim });
    if (dModel % heads !== 0) {
      throw new RangeError(`posenc.${fn}: config.heads must divide config.dModel (${dModel} % ${heads} != 0)`);
    }
    const normFirst = checkBoolean(fn, 'config.normFirst', config.normFirst ?? undefined, false);
    const activation = config.activation ?? 'relu';
    const expected = `'${core.activations.join("' or '")}'`;
    if (typeof activation !== 'string') throw typeError(fn, 'config.activation', expected, activation);
    if (!core.activations.includes(activation)) {
      throw new RangeError(`posenc.${fn}: config.activation must be ${expected}, got ${describe(activation)}`);
    }
    const eps = config.layerNormEps ?? 1e-5;
    if (typeof eps !== 'number') throw typeError(fn, 'config.layerNormEps', 'a number', eps);
    if (!Number.isFinite(eps) || eps < 0) {
      throw new RangeError(`posenc.${fn}: config.layerNormEps must be a finite number >= 0, got ${eps}`);
    }
    const position = checkPosition(fn, config, dModel / heads);
    return Object.freeze({ dModel, heads, ffDim, normFirst, activation, layerNormEps: eps, ...position });
  }

  // Like option names, tensor names are part of the API: unknown or missing ones are TypeErrors;
  // a tensor of the wrong length is a RangeError that says the length expected. Returns the
  // checked arrays by name (each read once).
  function checkWeights(fn, weights, tensors) {
    if (weights === null || typeof weights !== 'object' || Array.isArray(weights) || ArrayBuffer.isView(weights) ||
        weights instanceof Map) {
      throw typeError(fn, 'weights', 'a plain object of Float32Arrays keyed by state_dict name', weights);
    }
    const byName = new Map(tensors.map((t) => [t.name, t]));
    const checked = new Map();
    for (const [name, given] of Object.entries(weights)) {
      const tensor = byName.get(name);
      if (!tensor) {
        throw new TypeError(`posenc.${fn}: weights["${name}"] is not a tensor of nn.TransformerEncoderLayer (expected ${tensors.map((t) => t.name).join(', ')})`);
      }
      const value = checkTypedArray(fn, `weights["${name}"]`, given, Float32Array, 'a Float32Array');
      const count = tensor.dims.reduce((n, size) => n * size, 1);
      if (value.length !== count) {
        const shape = tensor.dims.length === 1 ? '' : `${tensor.dims.join(' x ')} = `;
        throw new RangeError(`posenc.${fn}: weights["${name}"] must hold ${shape}${count} floats (${tensor.dimNames}), got ${value.length}`);
      }
      checked.set(name, value);
    }
    for (const { name } of tensors) {
      if (!checked.has(name)) throw new TypeError(`posenc.${fn}: weights["${name}"] is missing`);
    }
    return checked;
  }

  api.encoderLayer = function encoderLayer(options) {
    const fn = 'encoderLayer';
    if (options === undefined) throw new TypeError(`posenc.${fn}: needs { config, weights }`);
    const { config: given, weights } = checkOptionsObject(fn, options, LAYER_OPTIONS);
    const config = checkConfig(fn, given);
    const tensors = core.layerTensors(config.dModel, config.ffDim);
    const checked = checkWeights(fn, weights, tensors);

    const handle = core.newLayer();
    try {
      if (handle.configure(core.layerConfig(config)) !== 0) {
        throw layerError(fn, handle, 'config: ');
      }
      for (const { name } of tensors) {
        const w = checked.get(name);
        const code = withBuffers(fn, [w.length * 4], (ptr) => {
          Module.HEAPF32.set(w, ptr >> 2);
          return handle.setTensor(name, ptr, w.length);
        });
        // Shapes were checked above: what is left is a NaN or infinite element, or memory.
        if (code !== 0) throw layerError(fn, handle, 'weights: ');
      }
    } catch (e) {
      handle.delete();
      throw e;
    }

    const layer = {
      forward(input, callOptions) {
        const h = live('forward');
        const f = 'encoderLayer.forward';
        const o = checkOptionsObject(f, callOptions, LAYER_FORWARD_OPTIONS);
        const { dModel } = config;
        let data = input;
        if (isTensorLike(input)) {
          // [L, dModel] or [1, L, dModel] (one sequence).
          const t = readTensor(f, 'x', input);
          const [b, ...rest] = t.dims.length === 3 ? t.dims : [1, ...t.dims];
          if (rest.length !== 2 || b !== 1 || rest[1] !== dModel) {
            throw new RangeError(`posenc.${f}: x must have dims [L, ${dModel}] or [1, L, ${dModel}], got [${t.dims}]`);
          }
          data = t.data;
        }
        const x = checkTypedArray(f, 'x', data, Float32Array, 'a Float32Array (L x dModel, row-major)');
        if (x.length === 0 || x.length % dModel !== 0) {
          throw new RangeError(`posenc.${f}: x must hold L x ${dModel} floats with L >= 1, got ${x.length}`);
        }
        const length = x.length / dModel;
        if (length > maxSequenceLength) {
          throw new RangeError(`posenc.${f}: x has ${length} rows (L); at most ${maxSequenceLength}`);
        }
        const causal = checkBoolean(f, 'causal', o.causal ?? undefined, false);
        const mask = maskBytes(f, o.keyPaddingMask, length);
        const positions = rowPositions(f, o, length);
        const offset = positionOffset(f, o.positionOffset);
        const sizes = [x.length * 4, x.length * 4, mask ? length : null, positions ? length * 8 : null];
        return withBuffers(f, sizes, (xp, op, mp, pp) => {
          Module.HEAPF32.set(x, xp >> 2);
          if (mask) Module.HEAPU8.set(mask, mp);
          if (positions) Module.HEAPF64.set(positions, pp >> 3);
          if (h.forward(xp, length, causal, mp, offset, pp, op) !== 0) throw layerError(f, h);
          return Module.HEAPF32.slice(op >> 2, (op >> 2) + x.length);
        });
      },
      attention() {
        const h = live('attention');
        const l = h.attentionLength();
        return copyAttention(Module, h.attention(), config.heads * l * l);
      },
    };
    const live = ownHandle(layer, handle, (method) => `posenc.encoderLayer.${method}: this encoderLayer was disposed`);
    Object.defineProperty(layer, 'config', { value: config, enumerable: true });
    return Object.freeze(ctx.guardMethods(layer, 'encoderLayer.'));
  };
}
