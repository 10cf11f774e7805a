// The friendly JavaScript API over the plain C exports of bindings/exports*.cpp.
// Data flows one way: options -> validated spec -> calls into wasm over bounded chunks -> copies
// into JS-owned arrays. Nothing returned to the caller is a view of wasm memory.

import { checkOptionsObject, describe, isDetached, typeError } from './check.js';
import { presetRecords, statusText } from './handles.js';
import { attachLayerApi } from './layer.js';

const LAYOUTS = ['interleaved', 'split'];
const FREQUENCIES = ['paper', 'half'];
const ODD = ['paper', 'zero-pad', 'reject'];

/** The largest typed array length every engine accepts, and the core's element limit. */
export const MAX_ELEMENTS = 2147483647;
export const MAX_DIM = 65536;
export const MAX_POSITION = 2147483647;

// Floats of the per-instance scratch buffer: chunks of rows go through it, so working memory is
// O(dim x chunk), never O(length x dim). 64K floats = 256 KB stays in cache. (Consecutive rows go
// in whole angle-addition blocks of at least 8 rows, so above dim 8192 a chunk is 8 rows.)
const SCRATCH_FLOATS = 65536;

const SPEC_OPTIONS = ['preset', 'base', 'minTimescale', 'layout', 'frequencies', 'odd'];
const ROW_OPTIONS = ['offset', 'positions', 'paddingMask', 'paddingIdx'];

// Status codes of posenc::Status (cpp/include/posenc/status.hpp) that are type errors rather
// than range errors never reach here: the JS layer checks types first.
const STATUS_OK = 0;

function rangeError(fn, name, expected, value) {
  return new RangeError(`posenc.${fn}: ${name} must be ${expected}, got ${describe(value)}`);
}

/** A finite number check with a TypeError for non-numbers and a RangeError for bad values. */
function checkNumber(fn, name, value, { integer = false, min = -Infinity, max = Infinity, above } = {}) {
  if (typeof value !== 'number') {
    throw typeError(fn, name, integer ? 'an integer number' : 'a number', value);
  }
  const bounds =
    above !== undefined
      ? ` greater than ${above}`
      : max === Infinity
        ? min === -Infinity
          ? ''
          : ` at least ${min}`
        : ` from ${min} to ${max}`;
  const what = `${integer ? 'an integer' : 'a finite number'}${bounds}`;
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw rangeError(fn, name, what, value);
  }
  if ((above !== undefined && !(value > above)) || value < min || value > max) {
    throw rangeError(fn, name, what, value);
  }
  return value;
}

function checkFloat32Array(fn, name, value) {
  if (!(value instanceof Float32Array)) throw typeError(fn, name, 'a Float32Array', value);
  if (isDetached(value)) {
    throw new TypeError(`posenc.${fn}: ${name} is backed by a detached ArrayBuffer`);
  }
  return value;
}

function checkEnum(fn, name, value, allowed) {
  if (typeof value !== 'string') throw typeError(fn, name, `one of '${allowed.join("', '")}'`, value);
  const index = allowed.indexOf(value);
  if (index < 0) throw rangeError(fn, name, `one of '${allowed.join("', '")}'`, value);
  return index;
}

/** Numbers from an Array or a non-BigInt typed array, for positions. */
function checkNumberList(fn, name, value, length) {
  const ok =
    Array.isArray(value) ||
    (ArrayBuffer.isView(value) &&
      !(value instanceof DataView) &&
      !(value instanceof BigInt64Array) &&
      !(value instanceof BigUint64Array));
  if (!ok) throw typeError(fn, name, 'an Array or typed array of numbers', value);
  if (ArrayBuffer.isView(value) && isDetached(value)) {
    throw new TypeError(`posenc.${fn}: ${name} is backed by a detached ArrayBuffer`);
  }
  if (length !== undefined && value.length !== length) {
    throw new RangeError(`posenc.${fn}: ${name} must have ${length} entries (one per row), got ${value.length}`);
  }
  return value;
}

export function createApi(Module, { simd }) {
  const presetList = [];
  for (const record of presetRecords(Module)) presetList.push(Object.freeze(record));
  const presetsByName = new Map(presetList.map((p) => [p.name, p]));
  const presetNames = presetList.map((p) => p.name);

  // ---- wasm memory: one scratch region per instance, grown on demand -------------------------
  let scratchPtr = 0;
  let scratchBytes = 0;
  // wasm32 memory tops out at 2 GB here; larger byte counts would also wrap in malloc's argument.
  const MAX_ALLOCATION = 2 ** 31 - 65536;
  function scratch(fn, bytes) {
    if (bytes > scratchBytes) {
      if (bytes > MAX_ALLOCATION) {
        throw new RangeError(`posenc.${fn}: this request needs ${bytes} bytes of wasm memory, more than the 2 GB wasm32 can hold`);
      }
      const ptr = Module._malloc(bytes);
      if (!ptr) {
        throw new RangeError(`posenc.${fn}: cannot allocate ${bytes} bytes of wasm memory for this request`);
      }
      if (scratchPtr) Module._free(scratchPtr);
      scratchPtr = ptr;
      scratchBytes = bytes;
    }
    return scratchPtr;
  }

  // ---- spec resolution, with a small cache of EncoderHandles (frequencies computed once) -----
  const handleCache = new Map();
  const HANDLE_CACHE_SIZE = 16;

  // dimName is the name of the caller's argument that holds the encoding's width (peDim for concat).
  function resolveSpec(fn, dim, options, dimName = 'dim') {
    checkNumber(fn, dimName, dim, { integer: true, min: 1, max: MAX_DIM });
    const presetName = options.preset === undefined ? 'vaswani' : options.preset;
    if (typeof presetName !== 'string') throw typeError(fn, 'preset', `one of '${presetNames.join("', '")}'`, presetName);
    const preset = presetsByName.get(presetName);
    if (!preset) throw rangeError(fn, 'preset', `one of '${presetNames.join("', '")}'`, presetName);
    const spec = {
      preset,
      dim,
      base: 10000,
      minTimescale: 1,
      layout: preset.layout,
      frequencies: preset.frequencies,
      odd: preset.odd,
      minDim: preset.minDim,
    };
    if (options.base !== undefined) spec.base = checkNumber(fn, 'base', options.base, { above: 1 });
    if (options.minTimescale !== undefined) {
      spec.minTimescale = checkNumber(fn, 'minTimescale', options.minTimescale, { above: 0 });
    }
    if (!Number.isFinite(spec.base / spec.minTimescale) || !Number.isFinite(spec.minTimescale * MAX_POSITION)) {
      throw new RangeError(
        `posenc.${fn}: minTimescale must keep base / minTimescale and minTimescale * 2^31 finite, got ${spec.minTimescale}`,
      );
    }
    if (!(spec.base > spec.minTimescale)) {
      throw new RangeError(`posenc.${fn}: base (${spec.base}) must be greater than minTimescale (${spec.minTimescale})`);
    }
    if (options.layout !== undefined) spec.layout = checkEnum(fn, 'layout', options.layout, LAYOUTS);
    if (options.frequencies !== undefined) {
      spec.frequencies = checkEnum(fn, 'frequencies', options.frequencies, FREQUENCIES);
    }
    if (options.odd !== undefined) spec.odd = checkEnum(fn, 'odd', options.odd, ODD);
    if (dim < spec.minDim) {
      throw new RangeError(`posenc.${fn}: ${dimName} must be at least ${spec.minDim} for preset '${preset.name}', got ${dim}`);
    }
    if (spec.odd === 2 && dim % 2 !== 0) {
      throw new RangeError(`posenc.${fn}: ${dimName} must be even for ${options.odd === 'reject' ? "odd: 'reject'" : `preset '${preset.name}'`}, got ${dim}`);
    }
    return spec;
  }

  function specKey(s) {
    return `${s.dim}|${s.base}|${s.minTimescale}|${s.layout}|${s.frequencies}|${s.odd}|${s.minDim}`;
  }

  // An encoder in wasm memory behind the C exports of bindings/exports.cpp.
  function newHandle(fn, s) {
    const ptr = Module._posenc_encoder_create(s.dim, s.base, s.minTimescale, s.layout, s.frequencies, s.odd, s.minDim);
    if (!ptr) throw new RangeError(`posenc.${fn}: not enough wasm memory for an encoder of dim ${s.dim}`);
    const status = Module._posenc_encoder_status(ptr);
    if (status !== STATUS_OK) {
      Module._posenc_encoder_destroy(ptr);
      throw statusError(fn, status);
    }
    return {
      ptr,
      encode: (n, first, pp, zp, out, len, zeroPosition) =>
        Module._posenc_encoder_encode(ptr, n, first, pp, zp, zeroPosition, out, len),
      addTo: (n, first, pp, zp, scale, emb, len, zeroPosition) =>
        Module._posenc_encoder_add_to(ptr, n, first, pp, zp, zeroPosition, scale, emb, len),
      concat: (n, first, pp, zp, emb, embLen, embDim, out, outLen, zeroPosition) =>
        Module._posenc_encoder_concat(ptr, n, first, pp, zp, zeroPosition, emb, embLen, embDim, out, outLen),
      shiftMatrix: (k, out, len) => Module._posenc_encoder_shift_matrix(ptr, k, out, len),
      shiftBlocks: (k, out, len) => Module._posenc_encoder_shift_blocks(ptr, k, out, len),
      sines: () => Module._posenc_encoder_sines(ptr),
      blockRows: Module._posenc_encoder_block_rows(ptr),
      live: true,
      delete() {
        this.live = false;
        Module._posenc_encoder_destroy(ptr);
      },
    };
  }

  // The spec and encoder handle of a free function's call. The last spec options seen and what
  // they resolved to are remembered: repeated calls with the same options (one row per call in
  // incremental decoding) skip resolveSpec and the handle cache's key string. Only options that
  // passed validation are remembered. The remembered handle is always the cache's most recent,
  // so no eviction can reach it; `live` is checked anyway, as a guard for future callers.
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
      m.odd === o.odd &&
      m.handle.live
    ) {
      return m;
    }
    const spec = resolveSpec(fn, dim, o, dimName);
    const handle = cachedHandle(fn, spec);
    const { preset, base, minTimescale, layout, frequencies, odd } = o;
    lastSpec = { dim, preset, base, minTimescale, layout, frequencies, odd, spec, handle };
    return lastSpec;
  }

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
    if (handleCache.size > HANDLE_CACHE_SIZE) {
      const [oldKey, oldHandle] = handleCache.entries().next().value;
      handleCache.delete(oldKey);
      oldHandle.delete();
    }
    return handle;
  }

  function statusError(fn, status) {
    const { argument, message } = statusText(Module, status);
    return new RangeError(`posenc.${fn}: ${message}${argument ? ` (argument: ${argument})` : ''}`);
  }

  // ---- rows: offset, explicit positions or a padding mask ------------------------------------
  // Returns { count, first, positions: Float64Array|null, zeroRows: Uint8Array|null, zeroPosition }
  function resolveRows(fn, spec, length, options) {
    if (options.positions !== undefined && (options.offset !== undefined || options.paddingMask !== undefined)) {
      throw new TypeError(`posenc.${fn}: give either positions or offset/paddingMask, not both`);
    }
    const fairseq = spec.preset.usesPaddingIdx;
    let paddingIdx = 1;
    if (options.paddingIdx !== undefined) {
      if (!fairseq) {
        throw new TypeError(`posenc.${fn}: paddingIdx applies only to preset 'fairseq' (its positions start at paddingIdx + 1)`);
      }
      paddingIdx = checkNumber(fn, 'paddingIdx', options.paddingIdx, { integer: true, min: 0, max: MAX_POSITION - 1 });
    }
    const origin = fairseq ? paddingIdx + 1 : spec.preset.firstPosition;
    const zeroPosition = fairseq ? paddingIdx : -1;
    const offset =
      options.offset === undefined ? 0 : checkNumber(fn, 'offset', options.offset, { min: 0, max: MAX_POSITION });
    const rows = { count: length, first: origin + offset, positions: null, zeroRows: null, zeroPosition };

    if (options.positions !== undefined) {
      const list = checkNumberList(fn, 'positions', options.positions, length);
      const positions = new Float64Array(length);
      for (let r = 0; r < length; r++) {
        const p = list[r];
        if (typeof p !== 'number') throw typeError(fn, `positions[${r}]`, 'a number', p);
        if (!(p >= 0 && p <= MAX_POSITION)) {
          throw rangeError(fn, `positions[${r}]`, `a finite number from 0 to ${MAX_POSITION}`, p);
        }
        positions[r] = p;
      }
      rows.positions = positions;
    } else if (options.paddingMask !== undefined) {
      const mask = checkNumberList(fn, 'paddingMask', options.paddingMask, length);
      const zeroRows = new Uint8Array(length);
      const positions = new Float64Array(length);
      let next = rows.first;
      for (let r = 0; r < length; r++) {
        const m = mask[r];
        if (m !== 0 && m !== 1 && m !== true && m !== false) {
          throw rangeError(fn, `paddingMask[${r}]`, '0, 1, false or true (1 = padding)', m);
        }
        if (m === 1 || m === true) {
          zeroRows[r] = 1;
          positions[r] = fairseq ? paddingIdx : 0;
        } else {
          positions[r] = next++;
        }
      }
      if (next - 1 > MAX_POSITION) {
        throw rangeError(fn, 'offset', `such that every position is at most ${MAX_POSITION}`, offset);
      }
      rows.positions = positions;
      rows.zeroRows = zeroRows;
    } else if (rows.first + length - 1 > MAX_POSITION) {
      throw rangeError(fn, 'offset', `such that offset + length - 1 is at most ${MAX_POSITION}`, offset);
    }
    return rows;
  }

  function checkLength(fn, length, width) {
    checkNumber(fn, 'length', length, { integer: true, min: 1, max: MAX_ELEMENTS });
    if (length * width > MAX_ELEMENTS) {
      throw new RangeError(`posenc.${fn}: length * dim must be at most ${MAX_ELEMENTS} elements, got ${length} x ${width}`);
    }
  }

  function checkOut(fn, out, needed) {
    if (out === undefined) return new Float32Array(needed);
    checkFloat32Array(fn, 'out', out);
    if (out.length < needed) {
      throw new RangeError(`posenc.${fn}: out must hold at least ${needed} floats, got ${out.length}`);
    }
    return out;
  }

  // Copies count floats from the wasm heap (float index from) into out at index at. A few floats
  // are copied element by element (cheaper than creating a subarray view); more go through set(),
  // a memcpy, which is about 6x faster than the loop for a 512-float row.
  function copyOut(out, at, from, count) {
    const heap = Module.HEAPF32;
    if (count <= 32) {
      for (let i = 0; i < count; i++) out[at + i] = heap[from + i];
    } else {
      out.set(heap.subarray(from, from + count), at);
    }
  }

  // ---- the chunked drivers --------------------------------------------------------------------
  // Runs `call(n, first, positionsPtr, zeroRowsPtr, dataPtr)` over chunks of rows; before each
  // call `fill(r0, n, dataPtr)` may copy input in, after it `drain(r0, n, dataPtr)` copies out.
  // Consecutive rows go in chunks of whole angle-addition blocks (blockRows rows centred on the
  // multiples of blockRows; the first chunk ends where the first whole block starts), so the core
  // computes both rows of every pair in one pass.
  function forChunks(fn, rows, rowFloats, call, fill, drain, blockRows) {
    let rowsPerChunk = Math.max(1, Math.floor(SCRATCH_FLOATS / rowFloats));
    let lead = 0;
    if (!rows.positions && blockRows > 1) {
      rowsPerChunk = Math.max(blockRows, rowsPerChunk - (rowsPerChunk % blockRows));
      lead = (blockRows - ((Math.floor(rows.first) + blockRows / 2) % blockRows)) % blockRows;
    }
    const chunkRows = Math.min(rowsPerChunk, rows.count);
    const dataBytes = Math.ceil((chunkRows * rowFloats * 4) / 16) * 16; // keeps positions 8-aligned
    const positionBytes = rows.positions ? chunkRows * 8 : 0;
    const zeroBytes = rows.zeroRows ? chunkRows : 0;
    const base = scratch(fn, dataBytes + positionBytes + zeroBytes + 16);
    const dataPtr = base;
    const positionsPtr = rows.positions ? base + dataBytes : 0;
    const zeroPtr = rows.zeroRows ? base + dataBytes + positionBytes : 0;
    for (let r0 = 0, n = 0; r0 < rows.count; r0 += n) {
      n = Math.min(r0 === 0 && lead > 0 ? lead : chunkRows, rows.count - r0);
      if (positionsPtr) Module.HEAPF64.set(rows.positions.subarray(r0, r0 + n), positionsPtr / 8);
      if (zeroPtr) Module.HEAPU8.set(rows.zeroRows.subarray(r0, r0 + n), zeroPtr);
      if (fill) fill(r0, n, dataPtr);
      const status = call(n, rows.first + r0, positionsPtr, zeroPtr, dataPtr);
      if (status !== STATUS_OK) throw statusError(fn, status);
      drain(r0, n, dataPtr);
    }
  }

  function runEncode(fn, handle, spec, length, rows, outOption) {
    const dim = spec.dim;
    const needed = length * dim;
    const out = checkOut(fn, outOption, needed);
    forChunks(
      fn,
      rows,
      dim,
      (n, first, pp, zp, dp) => handle.encode(n, first, pp, zp, dp, n * dim, rows.zeroPosition),
      null,
      (r0, n, dp) => copyOut(out, r0 * dim, dp >> 2, n * dim),
      handle.blockRows,
    );
    return out.length === needed ? out : out.subarray(0, needed);
  }

  function runAddTo(fn, handle, spec, embeddings, rows, scale) {
    const dim = spec.dim;
    forChunks(
      fn,
      rows,
      dim,
      (n, first, pp, zp, dp) => handle.addTo(n, first, pp, zp, scale, dp, n * dim, rows.zeroPosition),
      (r0, n, dp) => Module.HEAPF32.set(embeddings.subarray(r0 * dim, (r0 + n) * dim), dp / 4),
      (r0, n, dp) => embeddings.set(Module.HEAPF32.subarray(dp / 4, dp / 4 + n * dim), r0 * dim),
      handle.blockRows,
    );
    return embeddings;
  }

  function runConcat(fn, handle, spec, embeddings, embeddingDim, rows, outOption) {
    const width = embeddingDim + spec.dim;
    const needed = rows.count * width;
    const out = checkOut(fn, outOption, needed);
    // The chunk holds the embeddings (count x embeddingDim) then the output (count x width).
    forChunks(
      fn,
      rows,
      embeddingDim + width,
      (n, first, pp, zp, dp) =>
        handle.concat(n, first, pp, zp, dp, n * embeddingDim, embeddingDim, dp + n * embeddingDim * 4, n * width, rows.zeroPosition),
      (r0, n, dp) => Module.HEAPF32.set(embeddings.subarray(r0 * embeddingDim, (r0 + n) * embeddingDim), dp / 4),
      (r0, n, dp) => {
        const start = dp / 4 + n * embeddingDim;
        out.set(Module.HEAPF32.subarray(start, start + n * width), r0 * width);
      },
      handle.blockRows,
    );
    return out.length === needed ? out : out.subarray(0, needed);
  }

  function runShift(fn, handle, spec, k, form) {
    checkNumber(fn, 'k', k, { min: -MAX_POSITION, max: MAX_POSITION });
    if (spec.odd === 0 && spec.dim % 2 !== 0) {
      throw new RangeError(
        `posenc.${fn}: dim ${spec.dim} is odd with odd: 'paper', so its last sine column has no cosine to rotate with; use an even dim or odd: 'zero-pad'`,
      );
    }
    const n = form === 'blocks' ? 2 * handle.sines() : spec.dim * spec.dim;
    if (n * 4 > MAX_ALLOCATION) {
      throw new RangeError(
        `posenc.${fn}: a ${spec.dim} x ${spec.dim} matrix needs ${n * 4} bytes of wasm memory, more than the 2 GB wasm32 can hold; use form: 'blocks'`,
      );
    }
    const ptr = scratch(fn, n * 4);
    const status = form === 'blocks' ? handle.shiftBlocks(k, ptr, n) : handle.shiftMatrix(k, ptr, n);
    if (status !== STATUS_OK) throw statusError(fn, status);
    return Module.HEAPF32.slice(ptr / 4, ptr / 4 + n);
  }

  function checkShiftForm(fn, options) {
    const form = options.form === undefined ? 'matrix' : options.form;
    checkEnum(fn, 'form', form, ['matrix', 'blocks']);
    return form;
  }

  function checkScale(fn, options) {
    return options.scale === undefined ? 1 : checkNumber(fn, 'scale', options.scale);
  }

  function checkEmbeddings(fn, embeddings, dim) {
    checkFloat32Array(fn, 'embeddings', embeddings);
    if (embeddings.length === 0 || embeddings.length % dim !== 0) {
      throw new RangeError(
        `posenc.${fn}: embeddings.length must be a positive multiple of dim (${dim}), got ${embeddings.length}`,
      );
    }
    return embeddings.length / dim;
  }

  // ---- the public functions -------------------------------------------------------------------
  const ENCODE_OPTIONS = new Set([...SPEC_OPTIONS, ...ROW_OPTIONS, 'out']);
  const ADD_OPTIONS = new Set([...SPEC_OPTIONS, ...ROW_OPTIONS, 'scale']);
  const CONCAT_OPTIONS = new Set([...SPEC_OPTIONS, ...ROW_OPTIONS, 'out']);
  const SHIFT_OPTIONS = new Set([...SPEC_OPTIONS, 'form']);
  const ENCODER_OPTIONS = new Set(['dim', ...SPEC_OPTIONS]);
  const ENCODER_ENCODE_OPTIONS = new Set([...ROW_OPTIONS, 'out']);
  const ENCODER_ADD_OPTIONS = new Set([...ROW_OPTIONS, 'scale']);
  const ENCODER_SHIFT_OPTIONS = new Set(['form']);

  function encode(length, dim, options) {
    const o = checkOptionsObject('encode', options, ENCODE_OPTIONS);
    const { spec, handle } = specAndHandle('encode', dim, o);
    checkLength('encode', length, dim);
    const rows = resolveRows('encode', spec, length, o);
    return runEncode('encode', handle, spec, length, rows, o.out);
  }

  function addTo(embeddings, dim, options) {
    const o = checkOptionsObject('addTo', options, ADD_OPTIONS);
    const { spec, handle } = specAndHandle('addTo', dim, o);
    const length = checkEmbeddings('addTo', embeddings, dim);
    const scale = checkScale('addTo', o);
    const rows = resolveRows('addTo', spec, length, o);
    return runAddTo('addTo', handle, spec, embeddings, rows, scale);
  }

  function concat(embeddings, dim, peDim, options) {
    const o = checkOptionsObject('concat', options, CONCAT_OPTIONS);
    checkNumber('concat', 'dim', dim, { integer: true, min: 1, max: MAX_ELEMENTS });
    const { spec, handle } = specAndHandle('concat', peDim, o, 'peDim');
    const length = checkEmbeddings('concat', embeddings, dim);
    checkLength('concat', length, dim + peDim);
    const rows = resolveRows('concat', spec, length, o);
    return runConcat('concat', handle, spec, embeddings, dim, rows, o.out);
  }

  function shift(k, dim, options) {
    const o = checkOptionsObject('shift', options, SHIFT_OPTIONS);
    const { spec, handle } = specAndHandle('shift', dim, o);
    return runShift('shift', handle, spec, k, checkShiftForm('shift', o));
  }

  // ---- reusable encoders ----------------------------------------------------------------------
  const registry =
    typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((handle) => handle.delete()) : null;

  function encoder(options) {
    const o = checkOptionsObject('encoder', options, ENCODER_OPTIONS);
    if (o.dim === undefined) throw new TypeError('posenc.encoder: options.dim is required');
    const spec = resolveSpec('encoder', o.dim, o);
    let handle = newHandle('encoder', spec);
    const token = {};

    function live(fn) {
      if (!handle) throw new Error(`posenc.${fn}: this encoder has been disposed`);
      return handle;
    }

    const enc = {
      dim: spec.dim,
      preset: spec.preset.name,
      layout: LAYOUTS[spec.layout],
      frequencies: FREQUENCIES[spec.frequencies],
      odd: ODD[spec.odd],
      base: spec.base,
      minTimescale: spec.minTimescale,
      encode(length, callOptions) {
        const h = live('encoder.encode');
        const c = checkOptionsObject('encoder.encode', callOptions, ENCODER_ENCODE_OPTIONS);
        checkLength('encoder.encode', length, spec.dim);
        const rows = resolveRows('encoder.encode', spec, length, c);
        return runEncode('encoder.encode', h, spec, length, rows, c.out);
      },
      addTo(embeddings, callOptions) {
        const h = live('encoder.addTo');
        const c = checkOptionsObject('encoder.addTo', callOptions, ENCODER_ADD_OPTIONS);
        const length = checkEmbeddings('encoder.addTo', embeddings, spec.dim);
        const rows = resolveRows('encoder.addTo', spec, length, c);
        return runAddTo('encoder.addTo', h, spec, embeddings, rows, checkScale('encoder.addTo', c));
      },
      concat(embeddings, embeddingDim, callOptions) {
        const h = live('encoder.concat');
        const c = checkOptionsObject('encoder.concat', callOptions, ENCODER_ENCODE_OPTIONS);
        checkNumber('encoder.concat', 'embeddingDim', embeddingDim, { integer: true, min: 1, max: MAX_ELEMENTS });
        const length = checkEmbeddings('encoder.concat', embeddings, embeddingDim);
        checkLength('encoder.concat', length, embeddingDim + spec.dim);
        const rows = resolveRows('encoder.concat', spec, length, c);
        return runConcat('encoder.concat', h, spec, embeddings, embeddingDim, rows, c.out);
      },
      shift(k, callOptions) {
        const h = live('encoder.shift');
        const c = checkOptionsObject('encoder.shift', callOptions, ENCODER_SHIFT_OPTIONS);
        return runShift('encoder.shift', h, spec, k, checkShiftForm('encoder.shift', c));
      },
      get disposed() {
        return handle === null;
      },
      dispose() {
        if (!handle) return;
        if (registry) registry.unregister(token);
        handle.delete();
        handle = null;
      },
    };
    if (typeof Symbol.dispose === 'symbol') enc[Symbol.dispose] = enc.dispose;
    if (registry) registry.register(enc, handle, token);
    return Object.freeze(enc);
  }

  const presets = Object.freeze(
    presetList.map((p) =>
      Object.freeze({
        name: p.name,
        source: p.source,
        layout: LAYOUTS[p.layout],
        frequencies: FREQUENCIES[p.frequencies],
        odd: ODD[p.odd],
        minDim: p.minDim,
        firstPosition: p.usesPaddingIdx ? 'paddingIdx + 1' : p.firstPosition,
      }),
    ),
  );

  const api = { simd, presets, encode, addTo, concat, shift, encoder, _module: Module };
  attachLayerApi(api, Module); // encoderLayer() and loadModel(): bindings/js/layer.js
  return api;
}

// The wasm SIMD probe (the same module wasm-feature-detect validates: i32.const 0; i8x16.splat;
// i8x16.popcnt would be newer, this uses v128 ops every SIMD engine has).
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

/** Validates init() options and decides which build to load. */
export function chooseBuild(options) {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw typeError('init', 'options', 'an object', options);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'simd') throw new TypeError(`posenc.init: unknown option '${key}' (allowed: simd)`);
  }
  if (options.simd !== undefined && typeof options.simd !== 'boolean') {
    throw typeError('init', 'simd', 'a boolean', options.simd);
  }
  const supported = simdSupported();
  if (options.simd === true && !supported) {
    throw new Error('posenc.init: simd: true was asked for, but this engine does not support wasm SIMD');
  }
  return options.simd === undefined ? supported : options.simd;
}
