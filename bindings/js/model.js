// pe.loadModel(bytes): the small token tagger of one .safetensors file, over the core's model
// (core.js). The core validates the file (its errors name the tensor or metadata key); JS checks
// the argument types and copies tokens in and logits out.

import {
  checkBoolean, checkNumber, checkOptionsObject, checkTypedArray, describe, isDetachedBuffer, isTensorLike, readTensor, typeError,
} from './check.js';
import { copyAttention, layerError, maskBytes, positionOffset } from './layer.js';
import { ownHandle } from './lifetime.js';

const MODEL_FORWARD_OPTIONS = new Set(['causal', 'keyPaddingMask', 'positionalEncoding', 'pe', 'positionOffset']);

// Typed arrays of token ids (ONNX and transformers.js hold input_ids as int64).
const TOKEN_ARRAYS = [Int32Array, Uint32Array, BigInt64Array, BigUint64Array];

const words = (s) => (s ? s.split(' ').filter(Boolean) : []);

/** Adds loadModel to `api` (ctx: see api.js). */
export function attachModelApi(api, ctx) {
  const { Module, core, withBuffers } = ctx;
  const { maxSequenceLength } = core.limits;

  api.loadModel = function loadModel(bytes) {
    const fn = 'loadModel';
    const expected = 'a Uint8Array or an ArrayBuffer (the bytes of a .safetensors file)';
    if (bytes instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && bytes instanceof SharedArrayBuffer)) {
      if (isDetachedBuffer(bytes)) throw new TypeError(`posenc.${fn}: bytes is a detached ArrayBuffer`);
      bytes = new Uint8Array(bytes);
    }
    bytes = checkTypedArray(fn, 'bytes', bytes, Uint8Array, expected);
    const handle = core.newModel();
    let info;
    try {
      const code = withBuffers(fn, [bytes.length], (ptr) => {
        Module.HEAPU8.set(bytes, ptr);
        return handle.load(ptr, bytes.length);
      });
      if (code !== 0) throw layerError(fn, handle);
      info = core.modelInfo(handle);
    } catch (e) {
      handle.delete();
      throw e;
    }
    const vocab = Object.freeze(words(info.vocab));
    const labels = Object.freeze(words(info.labels));
    const config = Object.freeze({
      vocabSize: info.vocabSize, numClasses: info.numClasses, numLayers: info.numLayers,
      dModel: info.dModel, heads: info.heads, ffDim: info.ffDim, normFirst: info.normFirst,
      activation: info.activation, layerNormEps: info.layerNormEps,
      embeddingScale: info.embeddingScale, positionalEncoding: info.positionalEncoding,
      // The position step of every layer ('none' for the sinusoidal presets, added to the input).
      position: info.position, ropeTheta: info.ropeTheta, rotaryDim: info.rotaryDim,
      rotaryLayout: info.rotaryLayout, alibiMode: info.alibiMode,
      // The length-extrapolation experiment's metadata (null when the file has none).
      task: info.task || null, symbols: info.symbols === '' ? null : Number(info.symbols),
      copyDistance: info.copyDistance < 0 ? null : info.copyDistance,
      trainMaxLength: info.trainMaxLength < 0 ? null : info.trainMaxLength,
    });

    function checkTokens(f, tokens) {
      if (isTensorLike(tokens)) {
        // input_ids as ONNX and transformers.js hold them: [L] or [1, L] (one sequence), int64 too.
        const { data, dims } = readTensor(f, 'tokens', tokens);
        if (dims.length > 2 || (dims.length === 2 && dims[0] !== 1)) {
          throw new RangeError(`posenc.${f}: tokens must have dims [L] or [1, L] (one sequence), got [${dims}]`);
        }
        tokens = data;
      }
      if (!Array.isArray(tokens)) {
        const type = TOKEN_ARRAYS.find((T) => tokens instanceof T) ?? Int32Array;
        tokens = checkTypedArray(f, 'tokens', tokens, type, 'an Array or an Int32Array, Uint32Array, BigInt64Array or BigUint64Array of token ids');
      }
      const length = tokens.length;
      if (length < 1 || length > maxSequenceLength) {
        throw new RangeError(`posenc.${f}: tokens must hold 1 to ${maxSequenceLength} ids, got ${length}`);
      }
      const ids = new Int32Array(length);
      for (let i = 0; i < length; i++) {
        const given = tokens[i];
        const t = typeof given === 'bigint' && given >= 0n && given < 2n ** 31n ? Number(given) : given;
        if (typeof t !== 'number' && typeof t !== 'bigint') throw typeError(f, `tokens[${i}]`, 'an integer token id', t);
        if (!Number.isInteger(t) || t < 0 || t >= config.vocabSize) {
          throw new RangeError(`posenc.${f}: tokens[${i}] must be an integer id from 0 to ${config.vocabSize - 1}, got ${describe(given)}`);
        }
        ids[i] = t;
      }
      return ids;
    }

    const model = {
      forward(tokens, callOptions) {
        const h = live('forward');
        const f = 'model.forward';
        const o = checkOptionsObject(f, callOptions, MODEL_FORWARD_OPTIONS);
        const ids = checkTokens(f, tokens);
        const length = ids.length;
        const causal = checkBoolean(f, 'causal', o.causal ?? undefined, false);
        if (o.positionalEncoding !== undefined && o.pe !== undefined) {
          throw new TypeError(`posenc.${f}: give positionalEncoding or its alias pe, not both`);
        }
        const usePe = checkBoolean(f, o.pe !== undefined ? 'pe' : 'positionalEncoding', o.positionalEncoding ?? o.pe ?? undefined, true);
        const mask = maskBytes(f, o.keyPaddingMask, length);
        const offset = positionOffset(f, o.positionOffset, 0);
        if (offset + length - 1 > 2147483647) {
          throw new RangeError(`posenc.${f}: positionOffset + L - 1 must be at most 2147483647, got ${offset + length - 1}`);
        }
        const n = length * config.numClasses;
        return withBuffers(f, [length * 4, n * 4, mask ? length : null], (tp, op, mp) => {
          Module.HEAP32.set(ids, tp >> 2);
          if (mask) Module.HEAPU8.set(mask, mp);
          if (h.forward(tp, length, causal, mp, usePe, offset, op) !== 0) throw layerError(f, h);
          return Module.HEAPF32.slice(op >> 2, (op >> 2) + n);
        });
      },
      attention(layer) {
        const h = live('attention');
        if (layer !== undefined) {
          checkNumber('model.attention', 'layer', layer, { integer: true, min: 0, max: config.numLayers - 1 });
        }
        const l = h.attentionLength();
        const per = config.heads * l * l;
        if (l === 0) return null;
        if (layer !== undefined) return copyAttention(Module, h.attention(layer), per);
        const out = new Float32Array(config.numLayers * per);
        for (let i = 0; i < config.numLayers; i++) out.set(copyAttention(Module, h.attention(i), per), i * per);
        return out;
      },
    };
    const live = ownHandle(model, handle, (method) => `posenc.model.${method}: this model was disposed`);
    Object.defineProperties(model, {
      config: { value: config, enumerable: true },
      vocab: { value: vocab, enumerable: true },
      labels: { value: labels, enumerable: true },
    });
    return Object.freeze(ctx.guardMethods(model, 'model.'));
  };
}
