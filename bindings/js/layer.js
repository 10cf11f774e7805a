// The transformer encoder layer and the small model (issue 5): the friendly API over the thin
// handles of bindings/js/handles.js (C exports of bindings/exports_layer.cpp). Arguments are
// checked here (TypeError / RangeError naming the argument); data is copied into wasm memory for
// one call and copied out into new JS-owned arrays, so nothing returned is a view of wasm memory
// (memory growth would detach it).

import { checkOptionsObject, describe, isDetached, typeError } from './check.js';
import { newLayerHandle, newModelHandle } from './handles.js';

const ACTIVATIONS = ['relu', 'gelu'];
const LAYER_OPTIONS = new Set(['config', 'weights']);
const CONFIG_FIELDS = new Set(['dModel', 'heads', 'ffDim', 'normFirst', 'activation', 'layerNormEps']);
const LAYER_FORWARD_OPTIONS = new Set(['causal', 'keyPaddingMask']);
const MODEL_FORWARD_OPTIONS = new Set(['causal', 'keyPaddingMask', 'positionalEncoding', 'pe']);
const STATUS_OK = 0;
// posenc::LayerStatus codes that are range errors of the caller's data or size, out_of_memory (14)
// included, as for the encoding API (the rest are plain Errors: not ready).
const RANGE_STATUSES = new Set([1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14]);
// wasm32 memory tops out at 2 GB; the workspace of a forward is checked against it before the
// call, so no buffer size can wrap around in the core's 32-bit size_t.
const MAX_WASM_BYTES = 2 ** 31 - 65536;

const LAYER_NAMES = [
  'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight',
  'self_attn.out_proj.bias', 'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias',
  'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias',
];

/** Element count and shape (for messages) of each tensor of a layer. */
function tensorLengths(d, ff) {
  const shapes = {
    'self_attn.in_proj_weight': [3 * d * d, `3 dModel x dModel`],
    'self_attn.in_proj_bias': [3 * d, `3 dModel`],
    'self_attn.out_proj.weight': [d * d, `dModel x dModel`],
    'self_attn.out_proj.bias': [d, 'dModel'],
    'linear1.weight': [ff * d, 'ffDim x dModel'],
    'linear1.bias': [ff, 'ffDim'],
    'linear2.weight': [d * ff, 'dModel x ffDim'],
    'linear2.bias': [d, 'dModel'],
  };
  for (const n of ['norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias']) shapes[n] = [d, 'dModel'];
  return shapes;
}

function checkInt(fn, name, value, min, max) {
  if (typeof value !== 'number') throw typeError(fn, name, 'an integer number', value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`posenc.${fn}: ${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/** value must be an instance of Type (a typed array class) over a live buffer. */
function checkArray(fn, name, value, Type, expected) {
  if (!(value instanceof Type)) throw typeError(fn, name, expected, value);
  if (isDetached(value)) throw new TypeError(`posenc.${fn}: ${name} is backed by a detached ArrayBuffer`);
  return value;
}

/**
 * A key-padding mask as bytes (1 = hide that key), or null. Entries are 0, 1, false or true, as
 * for the encoding API's paddingMask.
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
 * Refuses a forward whose workspace (in floats: x, out and 5 more L x dModel buffers, qkv
 * L x 3 dModel, the feed-forward L x ffDim, the attention heads x L x L) cannot fit in wasm32
 * memory. Without this, heads x L x L above 2^32 floats would wrap in the core's size_t.
 */
function checkWorkspace(fn, name, length, { dModel, heads, ffDim }, layers = 1) {
  const perLayer = 8 * length * dModel + length * ffDim + heads * length * length;
  const floats = layers * perLayer + 3 * length * dModel;
  if (floats * 4 > MAX_WASM_BYTES) {
    throw new RangeError(
      `posenc.${fn}: ${name} with ${length} rows needs ${Math.ceil((floats * 4) / 2 ** 20)} MB of wasm memory ` +
        `(attention: ${heads} heads x ${length} x ${length}), more than the 2 GB wasm32 can hold`,
    );
  }
}

function errorFrom(fn, handle, status) {
  const message = `posenc.${fn}: ${handle.errorMessage()}`;
  return RANGE_STATUSES.has(status) ? new RangeError(message) : new Error(message);
}

/**
 * Adds `encoderLayer` and `loadModel` to the public API object. Module is the instantiated
 * Emscripten module (with _malloc, _free, HEAPU8/HEAPF32 and the posenc_* exports).
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

  api.encoderLayer = function encoderLayer(options) {
    const fn = 'encoderLayer';
    const { config, weights } = checkOptionsObject(fn, options, LAYER_OPTIONS);
    if (config === null || typeof config !== 'object') throw typeError(fn, 'config', 'an object', config);
    for (const key of Object.keys(config)) {
      if (!CONFIG_FIELDS.has(key)) {
        throw new TypeError(`posenc.${fn}: unknown config field '${key}' (allowed: ${[...CONFIG_FIELDS].join(', ')})`);
      }
    }
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
    if (weights === null || typeof weights !== 'object' || Array.isArray(weights) || ArrayBuffer.isView(weights)) {
      throw typeError(fn, 'weights', 'an object of Float32Arrays', weights);
    }
    // Like option names, tensor names are part of the API: unknown or missing ones are TypeErrors;
    // a tensor of the wrong length is a RangeError that says the length expected.
    for (const [name, value] of Object.entries(weights)) {
      if (!LAYER_NAMES.includes(name)) {
        throw new TypeError(`posenc.${fn}: weights["${name}"] is not a tensor of nn.TransformerEncoderLayer (expected ${LAYER_NAMES.join(', ')})`);
      }
      checkArray(fn, `weights["${name}"]`, value, Float32Array, 'a Float32Array');
    }
    const lengths = tensorLengths(dModel, ffDim);
    for (const name of LAYER_NAMES) {
      if (!(name in weights)) throw new TypeError(`posenc.${fn}: weights["${name}"] is missing`);
      const [count, shape] = lengths[name];
      if (weights[name].length !== count) {
        throw new RangeError(`posenc.${fn}: weights["${name}"] must hold ${shape} = ${count} floats, got ${weights[name].length}`);
      }
    }

    const handle = newLayerHandle(Module);
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
        checkArray(f, 'x', x, Float32Array, 'a Float32Array (L x dModel, row-major)');
        if (x.length === 0 || x.length % dModel !== 0) {
          throw new RangeError(`posenc.${f}: x must hold L x ${dModel} floats with L >= 1, got ${x.length}`);
        }
        const length = x.length / dModel;
        if (length > 8192) throw new RangeError(`posenc.${f}: x has ${length} rows; at most 8192`);
        const causal = o.causal ?? false;
        if (typeof causal !== 'boolean') throw typeError(f, 'causal', 'a boolean', causal);
        const mask = maskBytes(f, o.keyPaddingMask, length);
        checkWorkspace(f, 'x', length, frozen);
        let xp = 0;
        let op = 0;
        let mp = 0;
        try {
          xp = alloc(f, x.length * 4);
          op = alloc(f, x.length * 4);
          if (mask) mp = alloc(f, mask.length);
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
    checkArray(fn, 'bytes', bytes, Uint8Array, 'a Uint8Array (.safetensors file)');
    const handle = newModelHandle(Module);
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
        if (!Array.isArray(tokens)) checkArray(f, 'tokens', tokens, Int32Array, 'an Int32Array');
        const length = tokens.length;
        if (length < 1 || length > 8192) {
          throw new RangeError(`posenc.${f}: tokens must hold 1 to 8192 ids, got ${length}`);
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
          throw new TypeError(`posenc.${f}: give either positionalEncoding or its alias pe, not both`);
        }
        const peName = o.pe !== undefined ? 'pe' : 'positionalEncoding';
        const usePe = o.positionalEncoding ?? o.pe ?? true;
        if (typeof usePe !== 'boolean') throw typeError(f, peName, 'a boolean', usePe);
        const mask = maskBytes(f, o.keyPaddingMask, length);
        checkWorkspace(f, 'tokens', length, config, config.numLayers);
        const n = length * config.numClasses;
        let tp = 0;
        let op = 0;
        let mp = 0;
        try {
          tp = alloc(f, length * 4);
          op = alloc(f, n * 4);
          if (mask) mp = alloc(f, length);
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
