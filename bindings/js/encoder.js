// The sinusoidal encoding's public functions: pe.encode, pe.addTo, pe.concat, pe.shift (one-shot,
// over a small cache of core encoders) and pe.encoder() (a reusable Encoder that owns one), plus
// pe.presets. Data flows one way: options -> spec (spec.js) -> rows (rows.js) -> chunked calls
// (transfer.js) -> JS-owned results.

import { checkEnum, checkFloat32Array, checkNumber, checkOptionsObject } from './check.js';
import { checkDtype, halfOut } from './half.js';
import { ownHandle } from './lifetime.js';
import { ROW_OPTIONS, createRows } from './rows.js';
import { SPEC_OPTIONS, createSpecs } from './spec.js';
import { createTransfer, encoderError } from './transfer.js';

const HANDLE_CACHE_SIZE = 16;
// ... and at most this many columns in all (an encoder's tables grow with its dim: about 56 bytes
// a column, so 16 encoders of dim 65536 would keep 60 MB): the newest is always kept.
const HANDLE_CACHE_COLUMNS = 1 << 17;
const SHIFT_FORMS = ['matrix', 'blocks'];

const ENCODE_OPTIONS = new Set([...SPEC_OPTIONS, ...ROW_OPTIONS, 'out']);
const ENCODE_DTYPE_OPTIONS = new Set([...ENCODE_OPTIONS, 'dtype']);
const ADD_OPTIONS = new Set([...SPEC_OPTIONS, ...ROW_OPTIONS, 'scale']);
const SHIFT_OPTIONS = new Set([...SPEC_OPTIONS, 'form']);
const ENCODER_OPTIONS = new Set(['dim', ...SPEC_OPTIONS]);
const ENCODER_ENCODE_OPTIONS = new Set([...ROW_OPTIONS, 'out']);
const ENCODER_DTYPE_OPTIONS = new Set([...ENCODER_ENCODE_OPTIONS, 'dtype']);
const ENCODER_ADD_OPTIONS = new Set([...ROW_OPTIONS, 'scale']);
const ENCODER_SHIFT_OPTIONS = new Set(['form']);

/** Adds encode, addTo, concat, shift, encoder and presets to `api` (ctx: see api.js). */
export function attachEncoderApi(api, ctx) {
  const { core } = ctx;
  const { maxElements, maxPosition } = core.limits;
  const { presets, resolveSpec, specKey, names } = createSpecs(core);
  const { resolveRows, checkLength } = createRows(core);
  const { runEncode, runAddTo, runConcat, runShift } = createTransfer(ctx);
  // dtype 'float16' / 'bfloat16': the same chunks through the core's encodeHalf (16-bit bits where
  // the floats would be), copied out as such.
  const runEncodeHalf = createTransfer({
    ...ctx,
    copyOut: (out, at, from, count) => out.set(ctx.Module.HEAPU16.subarray(from * 2, from * 2 + count), at),
  }).runEncode;
  const paperOdd = core.oddDims.indexOf('paper');

  // A core encoder for a resolved spec (its anchor cache makes one-row calls cheap), with the
  // numbers the chunked transfer needs read once, off the per-call path.
  function newHandle(fn, s) {
    const encoder = core.newEncoder(s);
    if (encoder.status() !== 0) {
      const error = encoderError(fn, encoder);
      encoder.delete();
      throw error;
    }
    return { encoder, dim: s.dim, sines: encoder.sines(), blockRows: encoder.blockRows(), delete: () => encoder.delete() };
  }

  // ---- the one-shot functions' encoders: a small least-recently-used cache ------------------
  const handleCache = new Map();
  let cachedColumns = 0;

  function cachedHandle(fn, s) {
    const key = specKey(s);
    let handle = handleCache.get(key);
    if (handle) {
      handleCache.delete(key); // move to the back: least recently used goes first
      handleCache.set(key, handle);
      return handle;
    }
    handle = newHandle(fn, s);
    handleCache.set(key, handle);
    cachedColumns += handle.dim;
    while (handleCache.size > 1 && (handleCache.size > HANDLE_CACHE_SIZE || cachedColumns > HANDLE_CACHE_COLUMNS)) {
      const [oldKey, oldHandle] = handleCache.entries().next().value;
      handleCache.delete(oldKey);
      cachedColumns -= oldHandle.dim;
      oldHandle.delete();
    }
    return handle;
  }

  // The spec and encoder of a one-shot call. The last spec options seen and what they resolved to
  // are remembered: repeated calls with the same options (one row per call in incremental
  // decoding) skip resolveSpec and the cache's key string. Only options that passed validation are
  // remembered, and the remembered handle is always the cache's newest, so no eviction reaches it.
  let lastSpec = null;
  function specAndHandle(fn, dim, o, dimName = 'dim') {
    const m = lastSpec;
    if (
      m !== null &&
      m.dim === dim &&
      m.preset === o.preset &&
      m.base === o.base &&
      m.minTimescale === o.minTimescale &&
      m.layout === o.layout &&
      m.frequencies === o.frequencies &&
      m.odd === o.odd
    ) {
      return m;
    }
    const spec = resolveSpec(fn, dim, o, dimName);
    const handle = cachedHandle(fn, spec);
    const { preset, base, minTimescale, layout, frequencies, odd } = o;
    lastSpec = { dim, preset, base, minTimescale, layout, frequencies, odd, spec, handle };
    return lastSpec;
  }

  // ---- checks shared by the one-shot functions and the Encoder's methods ---------------------
  function checkOut(fn, given, needed) {
    if (given === undefined) return new Float32Array(needed);
    const out = checkFloat32Array(fn, 'out', given);
    if (out.length < needed) {
      throw new RangeError(`posenc.${fn}: out must hold at least ${needed} floats, got ${out.length}`);
    }
    return out;
  }

  /** The embeddings as a plain view (check.js), and their row count. */
  function checkEmbeddings(fn, given, dim) {
    const embeddings = checkFloat32Array(fn, 'embeddings', given);
    if (embeddings.length === 0 || embeddings.length % dim !== 0) {
      throw new RangeError(
        `posenc.${fn}: embeddings.length must be a positive multiple of dim (${dim}), got ${embeddings.length}`,
      );
    }
    return { embeddings, length: embeddings.length / dim };
  }

  // concat reads its input chunk by chunk while it writes out: the two must not share memory.
  function checkNoOverlap(fn, embeddings, out) {
    if (out.buffer !== embeddings.buffer) return;
    const a = embeddings.byteOffset;
    const b = out.byteOffset;
    if (a < b + out.byteLength && b < a + embeddings.byteLength) {
      throw new RangeError(`posenc.${fn}: out must not overlap embeddings (they share an ArrayBuffer); give a separate array`);
    }
  }

  const checkScale = (fn, o) => (o.scale === undefined ? 1 : checkNumber(fn, 'scale', o.scale));

  // ---- one call of each kind, for a resolved spec and its handle -----------------------------
  function doEncode(fn, handle, spec, length, o) {
    checkLength(fn, length, spec.dim);
    const rows = resolveRows(fn, spec, length, o);
    const dtype = checkDtype(fn, o.dtype);
    if (dtype === 0) return runEncode(fn, handle, spec.dim, rows, checkOut(fn, o.out, length * spec.dim));
    const { bits, result } = halfOut(fn, dtype, o.out, length * spec.dim);
    // The handle as the transfer sees it, with encode -> encodeHalf (made once per handle and dtype).
    const { encoder } = handle;
    handle[dtype] ??= { ...handle, encoder: { encode: (q) => encoder.encodeHalf(q, dtype - 1), error: () => encoder.error() } };
    runEncodeHalf(fn, handle[dtype], spec.dim, rows, bits);
    return result;
  }

  function doAddTo(fn, handle, spec, given, o) {
    const { embeddings, length } = checkEmbeddings(fn, given, spec.dim);
    const scale = checkScale(fn, o);
    runAddTo(fn, handle, spec.dim, embeddings, resolveRows(fn, spec, length, o), scale);
    return given;
  }

  function doConcat(fn, handle, spec, given, embeddingDim, o) {
    const { embeddings, length } = checkEmbeddings(fn, given, embeddingDim);
    checkLength(fn, length, embeddingDim + spec.dim);
    const rows = resolveRows(fn, spec, length, o);
    const out = checkOut(fn, o.out, length * (embeddingDim + spec.dim));
    checkNoOverlap(fn, embeddings, out);
    return runConcat(fn, handle, spec.dim, embeddings, embeddingDim, rows, out);
  }

  function doShift(fn, handle, spec, k, o) {
    const form = o.form === undefined ? 'matrix' : o.form;
    checkEnum(fn, 'form', form, SHIFT_FORMS);
    checkNumber(fn, 'k', k, { min: -maxPosition, max: maxPosition });
    if (spec.odd === paperOdd && spec.dim % 2 !== 0) {
      throw new RangeError(
        `posenc.${fn}: dim ${spec.dim} is odd with odd: 'paper', so its last sine column has no cosine to rotate with; use an even dim or odd: 'zero-pad'`,
      );
    }
    return runShift(fn, handle, spec.dim, k, form);
  }

  // ---- the public functions -------------------------------------------------------------------
  api.presets = presets;

  api.encode = function encode(length, dim, options) {
    const o = checkOptionsObject('encode', options, ENCODE_DTYPE_OPTIONS);
    const { spec, handle } = specAndHandle('encode', dim, o);
    return doEncode('encode', handle, spec, length, o);
  };

  api.addTo = function addTo(embeddings, dim, options) {
    const o = checkOptionsObject('addTo', options, ADD_OPTIONS);
    const { spec, handle } = specAndHandle('addTo', dim, o);
    return doAddTo('addTo', handle, spec, embeddings, o);
  };

  api.concat = function concat(embeddings, dim, peDim, options) {
    const o = checkOptionsObject('concat', options, ENCODE_OPTIONS);
    checkNumber('concat', 'dim', dim, { integer: true, min: 1, max: maxElements });
    const { spec, handle } = specAndHandle('concat', peDim, o, 'peDim');
    return doConcat('concat', handle, spec, embeddings, dim, o);
  };

  api.shift = function shift(k, dim, options) {
    const o = checkOptionsObject('shift', options, SHIFT_OPTIONS);
    const { spec, handle } = specAndHandle('shift', dim, o);
    return doShift('shift', handle, spec, k, o);
  };

  api.encoder = function encoder(options) {
    const o = checkOptionsObject('encoder', options, ENCODER_OPTIONS);
    if (o.dim === undefined) throw new TypeError('posenc.encoder: options.dim is required');
    const spec = resolveSpec('encoder', o.dim, o);
    const enc = {
      dim: spec.dim,
      preset: spec.preset.name,
      layout: names.layout[spec.layout],
      frequencies: names.frequencies[spec.frequencies],
      odd: names.odd[spec.odd],
      base: spec.base,
      minTimescale: spec.minTimescale,
      encode(length, callOptions) {
        const h = live('encode');
        const c = checkOptionsObject('encoder.encode', callOptions, ENCODER_DTYPE_OPTIONS);
        return doEncode('encoder.encode', h, spec, length, c);
      },
      addTo(embeddings, callOptions) {
        const h = live('addTo');
        const c = checkOptionsObject('encoder.addTo', callOptions, ENCODER_ADD_OPTIONS);
        return doAddTo('encoder.addTo', h, spec, embeddings, c);
      },
      concat(embeddings, embeddingDim, callOptions) {
        const h = live('concat');
        const c = checkOptionsObject('encoder.concat', callOptions, ENCODER_ENCODE_OPTIONS);
        checkNumber('encoder.concat', 'embeddingDim', embeddingDim, { integer: true, min: 1, max: maxElements });
        return doConcat('encoder.concat', h, spec, embeddings, embeddingDim, c);
      },
      shift(k, callOptions) {
        const h = live('shift');
        const c = checkOptionsObject('encoder.shift', callOptions, ENCODER_SHIFT_OPTIONS);
        return doShift('encoder.shift', h, spec, k, c);
      },
    };
    const live = ownHandle(enc, newHandle('encoder', spec), (method) => `posenc.encoder.${method}: this encoder has been disposed`);
    return Object.freeze(ctx.guardMethods(enc, 'encoder.'));
  };
}
