// The transformer encoder layer and the small model (issue 5): the friendly API over the thin
// handles of bindings/js/handles.js (C exports of bindings/exports_layer.cpp). Arguments are
// checked here (TypeError / RangeError naming the argument); data is copied into wasm memory for
// one call and copied out into new JS-owned arrays, so nothing returned is a view of wasm memory
// (memory growth would detach it).

import { checkOptionsObject, describe, isDetached, isDetachedBuffer, typeError } from './check.js';
import { newLayerHandle, newModelHandle } from './handles.js';

const ACTIVATIONS = ['relu', 'gelu'];
const LAYER_OPTIONS = new Set(['config', 'weights']);
const CONFIG_FIELDS = new Set(['dModel', 'heads', 'ffDim', 'normFirst', 'activation', 'layerNormEps']);
const LAYER_FORWARD_OPTIONS = new Set(['causal', 'keyPaddingMask']);
const MODEL_FORWARD_OPTIONS = new Set(['causal', 'keyPaddingMask', 'positionalEncoding', 'pe']);
const MAX_LENGTH = 8192; // posenc::kMaxSequenceLength
const STATUS_OK = 0;

const LAYER_NAMES = [
  'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight',
  'self_attn.out_proj.bias', 'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias',
  'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias',
];

function checkInt(fn, name, value, min, max) {
  if (typeof value !== 'number') throw typeError(fn, name, 'an integer number', value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`posenc.${fn}: ${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/** A typed array of the given class that is not detached (a detached one reads as empty). */
function checkTypedArray(fn, name, value, Type, expected) {
  if (!(value instanceof Type)) throw typeError(fn, name, expected, value);
  if (isDetached(value)) throw new TypeError(`posenc.${fn}: ${name} is backed by a detached ArrayBuffer`);
  return value;
}

/**
 * A key-padding mask as bytes (1 = hide that key), or null. An Array or any non-BigInt typed
 * array; entries are 0, 1, false or true, as for the encoding API's paddingMask.
 */
function maskBytes(fn, mask, length) {
  if (mask === undefined || mask === null) return null;
  const typed = ArrayBuffer.isView(mask) && !(mask instanceof DataView) &&
    !(mask instanceof BigInt64Array) && !(mask instanceof BigUint64Array);
  if (!typed && !Array.isArray(mask)) {
    throw typeError(fn, 'keyPaddingMask', 'an Array or typed array of 0/1 or booleans', mask);
  }
  if (typed && isDetached(mask)) {
    throw new TypeError(`posenc.${fn}: keyPaddingMask is backed by a detached ArrayBuffer`);
  }
  if (mask.length !== length) {
    throw new RangeError(`posenc.${fn}: keyPaddingMask must have ${length} entries (one per token), got ${mask.length}`);
  }
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const m = mask[i];
    if (m !== 0 && m !== 1 && m !== true && m !== false) {
      throw new RangeError(`posenc.${fn}: keyPaddingMask[${i}] must be 0, 1, false or true (1 = hide that key), got ${describe(m)}`);
    }
    bytes[i] = m ? 1 : 0;
  }
  return bytes;
}

/**
 * The Error for a posenc::LayerStatus the core returned: a RangeError (every status is about
 * the caller's data or its size, out of memory included), its message naming the tensor,
 * element or argument (`prefix` goes before that name, e.g. 'weights: ').
 */
function errorFrom(fn, handle, prefix = '') {
  return new RangeError(`posenc.${fn}: ${prefix}${handle.errorMessage()}`);
}

/** The shape of each state_dict tensor for a config, as [dims, the dims' names]. */
function layerShapes(dModel, ffDim) {
  const d = [dModel, 'dModel'];
  const f = [ffDim, 'ffDim'];
  const d3 = [3 * dModel, '3 dModel'];
  return {
    'self_attn.in_proj_weight': [d3, d],
    'self_attn.in_proj_bias': [d3],
    'self_attn.out_proj.weight': [d, d],
    'self_attn.out_proj.bias': [d],
    'linear1.weight': [f, d],
    'linear1.bias': [f],
    'linear2.weight': [d, f],
    'linear2.bias': [d],
    'norm1.weight': [d],
    'norm1.bias': [d],
    'norm2.weight': [d],
    'norm2.bias': [d],
  };
}

/**
 * Adds `encoderLayer` and `loadModel` to the public API object. Module is the instantiated
 * Emscripten module (with _malloc, _free, HEAPU8/HEAPF32 and the posenc_* exports).
 */
export function attachLayerApi(api, Module) {
  const alloc = (fn, bytes) => {
    const p = Module._malloc(Math.max(bytes, 4));
    if (!p) throw new RangeError(`posenc.${fn}: not enough wasm memory for ${bytes} bytes`);
    return p;
  };
  // Runs body(...pointers) with one wasm allocation per byte count (null: no allocation, pointer
  // 0) and frees them all afterwards, also when an allocation or the body throws.
  function withBuffers(fn, byteCounts, body) {
    const ptrs = [];
    try {
      for (const bytes of byteCounts) ptrs.push(bytes === null ? 0 : alloc(fn, bytes));
      return body(...ptrs);
    } finally {
      for (const p of ptrs) if (p) Module._free(p);
    }
  }
  const finalizer = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => handle.delete())
    : null;

  // Shared object plumbing: dispose, use-after-dispose, Symbol.dispose.
  function wrap(kind, handle, methods) {
    let alive = true;
    const object = {};
    const token = {};
    const live = (name) => {
      if (!alive) throw new Error(`posenc.${kind}.${name}: this ${kind} was disposed`);
      return handle;
    };
    for (const [name, f] of Object.entries(methods)) {
      object[name] = (...args) => f(live(name), ...args);
    }
    object.dispose = () => {
      if (!alive) return;
      alive = false;
      finalizer?.unregister(token);
      handle.delete();
    };
    if (typeof Symbol.dispose === 'symbol') object[Symbol.dispose] = object.dispose;
    finalizer?.register(object, handle, token);
    return object;
  }

  function copyAttention(handle, ptr, count) {
    if (!ptr || count === 0) return null;
    return Module.HEAPF32.slice(ptr / 4, ptr / 4 + count);
  }

  api.encoderLayer = function encoderLayer(options) {
    const fn = 'encoderLayer';
    if (options === undefined) throw new TypeError(`posenc.${fn}: needs { config, weights }`);
    const { config, weights } = checkOptionsObject(fn, options, LAYER_OPTIONS);
    if (config === undefined) throw typeError(fn, 'config', 'an object', config);
    checkOptionsObject(fn, config, CONFIG_FIELDS, 'config');
    const dModel = checkInt(fn, 'config.dModel', config.dModel, 1, 8192);
    const heads = checkInt(fn, 'config.heads', config.heads, 1, 256);
    const ffDim = checkInt(fn, 'config.ffDim', config.ffDim, 1, 65536);
    if (dModel % heads !== 0) {
      throw new RangeError(`posenc.${fn}: config.heads must divide config.dModel (${dModel} % ${heads} != 0)`);
    }
    const normFirst = config.normFirst ?? false;
    if (typeof normFirst !== 'boolean') throw typeError(fn, 'config.normFirst', 'a boolean', normFirst);
    const activation = config.activation ?? 'relu';
    if (typeof activation !== 'string') throw typeError(fn, 'config.activation', "'relu' or 'gelu'", activation);
    if (!ACTIVATIONS.includes(activation)) {
      throw new RangeError(`posenc.${fn}: config.activation must be 'relu' or 'gelu', got ${describe(activation)}`);
    }
    const eps = config.layerNormEps ?? 1e-5;
    if (typeof eps !== 'number') throw typeError(fn, 'config.layerNormEps', 'a number', eps);
    if (!Number.isFinite(eps) || eps < 0) {
      throw new RangeError(`posenc.${fn}: config.layerNormEps must be a finite number >= 0, got ${eps}`);
    }
    if (weights === null || typeof weights !== 'object' || Array.isArray(weights) || ArrayBuffer.isView(weights) ||
        weights instanceof Map) {
      throw typeError(fn, 'weights', 'a plain object of Float32Arrays keyed by state_dict name', weights);
    }
    const shapes = layerShapes(dModel, ffDim);
    for (const [name, value] of Object.entries(weights)) {
      // Like option names, tensor names are part of the API: unknown or missing ones are
      // TypeErrors; a tensor of the wrong length is a RangeError that says the length expected.
      if (!LAYER_NAMES.includes(name)) {
        throw new TypeError(`posenc.${fn}: weights["${name}"] is not a tensor of nn.TransformerEncoderLayer (expected ${LAYER_NAMES.join(', ')})`);
      }
      checkTypedArray(fn, `weights["${name}"]`, value, Float32Array, 'a Float32Array');
      const dims = shapes[name];
      const count = dims.reduce((n, [size]) => n * size, 1);
      if (value.length !== count) {
        const shape = dims.length === 1 ? '' : `${dims.map(([size]) => size).join(' x ')} = `;
        const names = dims.map(([, what]) => what).join(' x ');
        throw new RangeError(`posenc.${fn}: weights["${name}"] must hold ${shape}${count} floats (${names}), got ${value.length}`);
      }
    }
    for (const name of LAYER_NAMES) {
      if (!Object.hasOwn(weights, name)) throw new TypeError(`posenc.${fn}: weights["${name}"] is missing`);
    }

    const handle = newLayerHandle(Module);
    try {
      if (handle.configure(dModel, heads, ffDim, normFirst, ACTIVATIONS.indexOf(activation), eps) !== STATUS_OK) {
        throw errorFrom(fn, handle, 'config: ');
      }
      for (const name of LAYER_NAMES) {
        const w = weights[name];
        const status = withBuffers(fn, [w.length * 4], (ptr) => {
          Module.HEAPF32.set(w, ptr / 4);
          return handle.setTensor(name, ptr, w.length);
        });
        // Shapes were checked above: what is left is a NaN or infinite element, or memory.
        if (status !== STATUS_OK) throw errorFrom(fn, handle, 'weights: ');
      }
    } catch (e) {
      handle.delete();
      throw e;
    }

    const frozen = Object.freeze({ dModel, heads, ffDim, normFirst, activation, layerNormEps: eps });
    const layer = wrap('encoderLayer', handle, {
      forward(h, x, options) {
        const f = 'encoderLayer.forward';
        const o = checkOptionsObject(f, options, LAYER_FORWARD_OPTIONS);
        checkTypedArray(f, 'x', x, Float32Array, 'a Float32Array (L x dModel, row-major)');
        if (x.length === 0 || x.length % dModel !== 0) {
          throw new RangeError(`posenc.${f}: x must hold L x ${dModel} floats with L >= 1, got ${x.length}`);
        }
        const length = x.length / dModel;
        if (length > MAX_LENGTH) throw new RangeError(`posenc.${f}: x has ${length} rows (L); at most ${MAX_LENGTH}`);
        const causal = o.causal ?? false;
        if (typeof causal !== 'boolean') throw typeError(f, 'causal', 'a boolean', causal);
        const mask = maskBytes(f, o.keyPaddingMask, length);
        return withBuffers(f, [x.length * 4, x.length * 4, mask ? length : null], (xp, op, mp) => {
          Module.HEAPF32.set(x, xp / 4);
          if (mask) Module.HEAPU8.set(mask, mp);
          if (h.forward(xp, length, causal, mp, op) !== STATUS_OK) throw errorFrom(f, h);
          return Module.HEAPF32.slice(op / 4, op / 4 + x.length);
        });
      },
      attention(h) {
        const l = h.attentionLength();
        return copyAttention(h, h.attentionPtr(), heads * l * l);
      },
    });
    Object.defineProperty(layer, 'config', { value: frozen, enumerable: true });
    return Object.freeze(layer);
  };

  api.loadModel = function loadModel(bytes) {
    const fn = 'loadModel';
    const expected = 'a Uint8Array or an ArrayBuffer (the bytes of a .safetensors file)';
    if (bytes instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && bytes instanceof SharedArrayBuffer)) {
      if (isDetachedBuffer(bytes)) throw new TypeError(`posenc.${fn}: bytes is a detached ArrayBuffer`);
      bytes = new Uint8Array(bytes);
    }
    checkTypedArray(fn, 'bytes', bytes, Uint8Array, expected);
    const handle = newModelHandle(Module);
    let info;
    try {
      const status = withBuffers(fn, [bytes.length], (ptr) => {
        Module.HEAPU8.set(bytes, ptr);
        return handle.load(ptr, bytes.length);
      });
      if (status !== STATUS_OK) throw errorFrom(fn, handle);
      info = handle.info();
    } catch (e) {
      handle.delete();
      throw e;
    }
    const words = (s) => (s ? s.split(' ').filter(Boolean) : []);
    const vocab = Object.freeze(words(info.vocab));
    const labels = Object.freeze(words(info.labels));
    const config = Object.freeze({
      vocabSize: info.vocabSize, numClasses: info.numClasses, numLayers: info.numLayers,
      dModel: info.dModel, heads: info.heads, ffDim: info.ffDim, normFirst: info.normFirst,
      activation: info.activation, layerNormEps: info.layerNormEps,
      embeddingScale: info.embeddingScale, positionalEncoding: info.positionalEncoding,
    });
    const model = wrap('model', handle, {
      forward(h, tokens, options) {
        const f = 'model.forward';
        const o = checkOptionsObject(f, options, MODEL_FORWARD_OPTIONS);
        if (!Array.isArray(tokens)) {
          checkTypedArray(f, 'tokens', tokens, Int32Array, 'an Int32Array or an Array of token ids');
        }
        const length = tokens.length;
        if (length < 1 || length > MAX_LENGTH) {
          throw new RangeError(`posenc.${f}: tokens must hold 1 to ${MAX_LENGTH} ids, got ${length}`);
        }
        const ids = new Int32Array(length);
        for (let i = 0; i < length; i++) {
          const t = tokens[i];
          if (typeof t !== 'number') throw typeError(f, `tokens[${i}]`, 'an integer token id', t);
          if (!Number.isInteger(t) || t < 0 || t >= config.vocabSize) {
            throw new RangeError(`posenc.${f}: tokens[${i}] must be an integer id from 0 to ${config.vocabSize - 1}, got ${describe(t)}`);
          }
          ids[i] = t;
        }
        const causal = o.causal ?? false;
        if (typeof causal !== 'boolean') throw typeError(f, 'causal', 'a boolean', causal);
        if (o.positionalEncoding !== undefined && o.pe !== undefined) {
          throw new TypeError(`posenc.${f}: give positionalEncoding or its alias pe, not both`);
        }
        const peName = o.pe !== undefined ? 'pe' : 'positionalEncoding';
        const usePe = o.positionalEncoding ?? o.pe ?? true;
        if (typeof usePe !== 'boolean') throw typeError(f, peName, 'a boolean', usePe);
        const mask = maskBytes(f, o.keyPaddingMask, length);
        const n = length * config.numClasses;
        return withBuffers(f, [length * 4, n * 4, mask ? length : null], (tp, op, mp) => {
          Module.HEAP32.set(ids, tp / 4);
          if (mask) Module.HEAPU8.set(mask, mp);
          if (h.forward(tp, length, causal, mp, usePe, op) !== STATUS_OK) throw errorFrom(f, h);
          return Module.HEAPF32.slice(op / 4, op / 4 + n);
        });
      },
      attention(h, layer) {
        if (layer !== undefined) checkInt('model.attention', 'layer', layer, 0, config.numLayers - 1);
        const l = h.attentionLength();
        const per = config.heads * l * l;
        if (l === 0) return null;
        if (layer === undefined) {
          const out = new Float32Array(config.numLayers * per);
          for (let i = 0; i < config.numLayers; i++) {
            out.set(copyAttention(h, h.attentionPtr(i), per), i * per);
          }
          return out;
        }
        return copyAttention(h, h.attentionPtr(layer), per);
      },
    });
    Object.defineProperties(model, {
      config: { value: config, enumerable: true },
      vocab: { value: vocab, enumerable: true },
      labels: { value: labels, enumerable: true },
    });
    return Object.freeze(model);
  };
}
