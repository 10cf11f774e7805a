// ALiBi: pe.alibiSlopes(heads) (the paper's get_slopes, float64) and
// pe.alibiBias(heads, queryLength, keyLength, { mode, offset, attentionMask, batch, maskValue, as }):
// float32 [heads, q, k] written by the core in chunks of rows through the scratch region and
// copied into a JS-owned array; with a key padding mask, [batch, heads, q, k]: that block copied
// per row of the mask, its masked keys set to maskValue (as the causal part is).

import { checkEnum, checkFlags, checkNumber, checkNumberList, checkOptionsObject, typeError } from './check.js';
import { familyError } from './rotary.js';

export const ALIBI_MODES = ['causal', 'symmetric'];
const BIAS_OPTIONS = new Set(['mode', 'offset', 'attentionMask', 'batch', 'maskValue', 'as']);
const SCRATCH_FLOATS = 65536;
const MAX_ELEMENTS = 2 ** 31 - 1;

/** Adds pe.alibiSlopes and pe.alibiBias to `api` (ctx: see api.js). */
export function attachAlibiApi(api, ctx) {
  const { Module, scratch, withBuffers } = ctx;
  let handle = null; // one core Alibi per instance, made on first use (it holds only its last error)
  const core = () => (handle ??= new Module.Alibi());

  api.alibiSlopes = function alibiSlopes(heads) {
    const fn = 'alibiSlopes';
    checkNumber(fn, 'heads', heads, { integer: true, min: 1, max: Module.ALIBI_MAX_HEADS });
    return withBuffers(fn, [heads * 8], (ptr) => {
      if (core().slopes(heads, ptr) !== 0) throw familyError(fn, core());
      return Module.HEAPF64.slice(ptr / 8, ptr / 8 + heads);
    });
  };

  api.alibiBias = function alibiBias(heads, queryLength, keyLength, options) {
    const fn = 'alibiBias';
    checkNumber(fn, 'heads', heads, { integer: true, min: 1, max: Module.ALIBI_MAX_HEADS });
    checkNumber(fn, 'queryLength', queryLength, { integer: true, min: 1 });
    checkNumber(fn, 'keyLength', keyLength, { integer: true, min: 1 });
    const o = checkOptionsObject(fn, options, BIAS_OPTIONS);
    const [mask, batch] = readMask(fn, o, keyLength);
    const rows = heads * queryLength;
    const block = rows * keyLength;
    if (batch * block > MAX_ELEMENTS) {
      throw new RangeError(`posenc.${fn}: batch * heads * queryLength * keyLength must be at most 2^31 - 1, got ${batch * block}`);
    }
    const mode = o.mode === undefined ? 0 : checkEnum(fn, 'mode', o.mode, ALIBI_MODES);
    const offset = o.offset === undefined ? 0 : checkNumber(fn, 'offset', o.offset, { integer: true, min: 0, max: 2 ** 31 - 1 });
    // maskValue: -Infinity (the default) or a finite number such as float16's -65504.
    const maskValue = o.maskValue ?? -Infinity;
    if (maskValue !== -Infinity) checkNumber(fn, 'maskValue', maskValue);
    const tensor = o.as !== undefined && checkEnum(fn, 'as', o.as, ['array', 'tensor']) > 0;
    const out = new Float32Array(batch * block);
    const chunkRows = Math.max(1, Math.min(rows, Math.floor(SCRATCH_FLOATS / keyLength)));
    const dataBytes = Math.ceil((chunkRows * keyLength * 4) / 16) * 16;
    const base = scratch(fn, dataBytes + 9 * 8);
    // The request rotary_bindings.cpp reads (AlibiField): heads, queries, keys, mode, offset,
    // firstRow, rowCount, out, outLen.
    const request = Float64Array.of(heads, queryLength, keyLength, mode, offset, 0, 0, base, 0);
    for (let r0 = 0, n = 0; r0 < rows; r0 += n) {
      n = Math.min(chunkRows, rows - r0);
      request[5] = r0;
      request[6] = n;
      request[8] = n * keyLength;
      Module.HEAPF64.set(request, (base + dataBytes) / 8);
      if (core().biasRows(base + dataBytes) !== 0) throw familyError(fn, core());
      out.set(Module.HEAPF32.subarray(base / 4, base / 4 + n * keyLength), r0 * keyLength);
    }
    // The causal part (keys after the query's position) is the only -Infinity the core writes.
    for (let x = 0; maskValue !== -Infinity && x < block; x++) if (out[x] === -Infinity) out[x] = maskValue;
    // Batch b: a copy of the [heads, q, k] block with its masked keys set to maskValue (the last
    // first: each copies block 0 before block 0 is masked).
    for (let b = batch; b-- > 0; ) {
      if (b) out.copyWithin(b * block, 0, block);
      for (let j = 0; mask && j < keyLength; j++) {
        for (let x = b * block + j; !mask[b * keyLength + j] && x < (b + 1) * block; x += keyLength) out[x] = maskValue;
      }
    }
    return tensor ? { data: out, dims: [batch, heads, queryLength, keyLength], type: 'float32' } : out;
  };
}

/**
 * [mask, batch]: options.attentionMask (key padding, 1 = attend) as a Uint8Array of batch rows of
 * keyLength, or null; batch: the mask's rows, else options.batch, else 1. The mask: an Array of
 * rows, a flat Array or typed array of `batch` rows, or a tensor { data, dims: [batch, keyLength] }
 * on the CPU (its location is read before its data). Entries 0 or 1 (false, true and BigInts too).
 */
function readMask(fn, o, keyLength) {
  let m = o.attentionMask;
  let rows;
  if (m?.dims) {
    if ((m.location ?? 'cpu') !== 'cpu') throw typeError(fn, 'attentionMask', 'a tensor on the CPU', m.location);
    rows = m.dims[0];
    m = m.data;
  } else if (Array.isArray(m) && typeof m[0] === 'object') {
    rows = m.length;
    m = m.flatMap((row) => (row?.length === keyLength ? Array.from(row) : [NaN]));
  }
  // With rows in the mask, batch (if given) must be their count: "from 3 to 3".
  const batch = checkNumber(fn, 'batch', o.batch ?? rows ?? 1, { integer: true, min: rows ?? 1, max: rows ?? Infinity });
  if (m === undefined) return [null, batch];
  // int64 masks (BigInt64Array, Arrays of BigInts) as numbers; 2n stays 2, which checkFlags rejects.
  if (m instanceof BigInt64Array || Array.isArray(m)) m = Array.from(m, (v) => (typeof v === 'bigint' ? Number(v) : v));
  checkNumberList(fn, 'attentionMask', m, batch * keyLength, { per: 'key of each row' });
  return [checkFlags(fn, 'attentionMask', m, '1 = attend'), batch];
}
