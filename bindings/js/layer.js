// The transformer encoder layer and the small model (issue 5): the friendly API over the thin
// embind handles of bindings/embind_layer.cpp. Arguments are checked here (TypeError / RangeError
// naming the argument); data is copied into wasm memory for one call and copied out into new
// JS-owned arrays, so nothing returned is a view of wasm memory (memory growth would detach it).

import { checkOptionsObject, describe, typeError } from './check.js';

const ACTIVATIONS = ['relu', 'gelu'];
const LAYER_FORWARD_OPTIONS = new Set(['causal', 'keyPaddingMask']);
const MODEL_FORWARD_OPTIONS = new Set(['causal', 'keyPaddingMask', 'positionalEncoding', 'pe']);
const STATUS_OK = 0;
// posenc::LayerStatus codes that are range errors of the caller's data (the rest are plain
// Errors: out of memory, not ready).
const RANGE_STATUSES = new Set([1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13]);

const LAYER_NAMES = [
  'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight',
  'self_attn.out_proj.bias', 'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias',
  'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias',
];

const rangeError = (fn, name, message) => new RangeError(`posenc.${fn}: ${name}: ${message}`);

function checkInt(fn, name, value, min, max) {
  if (typeof value !== 'number') throw typeError(fn, name, 'an integer number', value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`posenc.${fn}: ${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/** A key-padding mask as bytes (1 = hide that key), or null. */
function maskBytes(fn, mask, length) {
  if (mask === undefined || mask === null) return null;
  if (!(mask instanceof Uint8Array) && !Array.isArray(mask)) {
    throw typeError(fn, 'keyPaddingMask', 'a Uint8Array or an Array of booleans', mask);
  }
  if (mask.length !== length) {
    throw new RangeError(`posenc.${fn}: keyPaddingMask must have ${length} entries (one per token), got ${mask.length}`);
  }
  return Uint8Array.from(mask, (v) => (v ? 1 : 0));
}

function errorFrom(fn, handle, status) {
  const message = `posenc.${fn}: ${handle.errorMessage()}`;
  return RANGE_STATUSES.has(status) ? new RangeError(message) : new Error(message);
}

/**
 * Adds `encoderLayer` and `loadModel` to the public API object. Module is the instantiated
 * Emscripten module (with _malloc, _free, HEAPU8/HEAPF32 and the embind classes).
 */
export function attachLayerApi(api, Module) {
  // Frees a list of pointers (0 entries are skipped).
  const free = (ptrs) => {
    for (const p of ptrs) if (p) Module._free(p);
  };
  const alloc = (fn, bytes) => {
    const p = Module._malloc(Math.max(bytes, 4));
    if (!p) throw new RangeError(`posenc.${fn}: not enough wasm memory for ${bytes} bytes`);
    return p;
  };
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

  api.encoderLayer = function encoderLayer({ config, weights } = {}) {
    const fn = 'encoderLayer';
    if (config === null || typeof config !== 'object') throw typeError(fn, 'config', 'an object', config);
    const dModel = checkInt(fn, 'config.dModel', config.dModel, 1, 8192);
    const heads = checkInt(fn, 'config.heads', config.heads, 1, 256);
    const ffDim = checkInt(fn, 'config.ffDim', config.ffDim, 1, 65536);
    if (dModel % heads !== 0) {
      throw new RangeError(`posenc.${fn}: config.heads must divide config.dModel (${dModel} % ${heads} != 0)`);
    }
    const normFirst = config.normFirst ?? false;
    if (typeof normFirst !== 'boolean') throw typeError(fn, 'config.normFirst', 'a boolean', normFirst);
    const activation = config.activation ?? 'relu';
    if (!ACTIVATIONS.includes(activation)) {
      throw new RangeError(`posenc.${fn}: config.activation must be 'relu' or 'gelu', got ${describe(activation)}`);
    }
    const eps = config.layerNormEps ?? 1e-5;
    if (typeof eps !== 'number') throw typeError(fn, 'config.layerNormEps', 'a number', eps);
    if (!Number.isFinite(eps) || eps < 0) {
      throw new RangeError(`posenc.${fn}: config.layerNormEps must be a finite number >= 0, got ${eps}`);
    }
    if (weights === null || typeof weights !== 'object') throw typeError(fn, 'weights', 'an object of Float32Arrays', weights);
    for (const [name, value] of Object.entries(weights)) {
      if (!LAYER_NAMES.includes(name)) {
        throw new RangeError(`posenc.${fn}: weights["${name}"] is not a tensor of nn.TransformerEncoderLayer (expected ${LAYER_NAMES.join(', ')})`);
      }
      if (!(value instanceof Float32Array)) throw typeError(fn, `weights["${name}"]`, 'a Float32Array', value);
    }
    for (const name of LAYER_NAMES) {
      if (!(name in weights)) throw new RangeError(`posenc.${fn}: weights["${name}"] is missing`);
    }

    const handle = new Module.LayerHandle();
    try {
      let status = handle.configure(dModel, heads, ffDim, normFirst, ACTIVATIONS.indexOf(activation), eps);
      if (status !== STATUS_OK) throw errorFrom(fn, handle, status);
      for (const name of LAYER_NAMES) {
        const w = weights[name];
        const ptr = alloc(fn, w.length * 4);
        try {
          Module.HEAPF32.set(w, ptr / 4);
          status = handle.setTensor(name, ptr, w.length);
        } finally {
          free([ptr]);
        }
        if (status !== STATUS_OK) {
          throw new RangeError(`posenc.${fn}: weights["${name}"]: ${handle.errorMessage()}`);
        }
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
        if (!(x instanceof Float32Array)) throw typeError(f, 'x', 'a Float32Array (L x dModel, row-major)', x);
        if (x.length === 0 || x.length % dModel !== 0) {
          throw new RangeError(`posenc.${f}: x must hold L x ${dModel} floats with L >= 1, got ${x.length}`);
        }
        const length = x.length / dModel;
        if (length > 8192) throw new RangeError(`posenc.${f}: x has ${length} rows; at most 8192`);
        const causal = o.causal ?? false;
        if (typeof causal !== 'boolean') throw typeError(f, 'causal', 'a boolean', causal);
        const mask = maskBytes(f, o.keyPaddingMask, length);
        const xp = alloc(f, x.length * 4);
        const op = alloc(f, x.length * 4);
        const mp = mask ? alloc(f, mask.length) : 0;
        try {
          Module.HEAPF32.set(x, xp / 4);
          if (mask) Module.HEAPU8.set(mask, mp);
          const status = h.forward(xp, length, causal, mp, op);
          if (status !== STATUS_OK) throw errorFrom(f, h, status);
          return Module.HEAPF32.slice(op / 4, op / 4 + x.length);
        } finally {
          free([xp, op, mp]);
        }
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
    if (!(bytes instanceof Uint8Array)) throw typeError(fn, 'bytes', 'a Uint8Array (.safetensors file)', bytes);
    const handle = new Module.ModelHandle();
    let info;
    try {
      const ptr = alloc(fn, bytes.length);
      let status;
      try {
        Module.HEAPU8.set(bytes, ptr);
        status = handle.load(ptr, bytes.length);
      } finally {
        free([ptr]);
      }
      if (status !== STATUS_OK) throw errorFrom(fn, handle, status);
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
        if (!(tokens instanceof Int32Array) && !Array.isArray(tokens)) {
          throw typeError(f, 'tokens', 'an Int32Array or an Array of token ids', tokens);
        }
        const length = tokens.length;
        if (length < 1 || length > 8192) {
          throw new RangeError(`posenc.${f}: tokens must hold 1 to 8192 ids, got ${length}`);
        }
        const ids = new Int32Array(length);
        for (let i = 0; i < length; i++) {
          const t = tokens[i];
          if (!Number.isInteger(t) || t < 0 || t >= config.vocabSize) {
            throw new RangeError(`posenc.${f}: tokens[${i}] must be an integer id from 0 to ${config.vocabSize - 1}, got ${describe(t)}`);
          }
          ids[i] = t;
        }
        const causal = o.causal ?? false;
        if (typeof causal !== 'boolean') throw typeError(f, 'causal', 'a boolean', causal);
        const usePe = o.positionalEncoding ?? o.pe ?? true;
        if (typeof usePe !== 'boolean') throw typeError(f, 'positionalEncoding', 'a boolean', usePe);
        const mask = maskBytes(f, o.keyPaddingMask, length);
        const n = length * config.numClasses;
        const tp = alloc(f, length * 4);
        const op = alloc(f, n * 4);
        const mp = mask ? alloc(f, length) : 0;
        try {
          Module.HEAP32.set(ids, tp / 4);
          if (mask) Module.HEAPU8.set(mask, mp);
          const status = h.forward(tp, length, causal, mp, usePe, op);
          if (status !== STATUS_OK) throw errorFrom(f, h, status);
          return Module.HEAPF32.slice(op / 4, op / 4 + n);
        } finally {
          free([tp, op, mp]);
        }
      },
      attention(h, layer) {
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
        checkInt('model.attention', 'layer', layer, 0, config.numLayers - 1);
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
