// ALiBi: pe.alibiSlopes(heads) (the paper's get_slopes, float64) and
// pe.alibiBias(heads, queryLength, keyLength, { mode, offset, attentionMask, batch, maskValue, dtype, as }):
// float32 [heads, q, k] written by the core in chunks of rows through the scratch region and
// copied into a JS-owned array; with a key padding mask, [batch, heads, q, k]: that block copied
// per row of the mask, its masked keys set to maskValue (as the causal part is). dtype 'float16' /
// 'bfloat16': the same layout of 16-bit bits, made here in JS from the float64 slopes, each value
// rounded once from the exact -(m d) (roundHalf; docs/PRECISION.md, "16-bit outputs").

import { checkEnum, checkFlags, checkNumber, checkNumberList, checkOptionsObject, typeError } from './check.js';
import { float16View } from './float16.js';
import { checkDtype } from './half.js';
import { familyError } from './rotary.js';

export const ALIBI_MODES = ['causal', 'symmetric'];
const BIAS_OPTIONS = new Set(['mode', 'offset', 'attentionMask', 'batch', 'maskValue', 'as', 'dtype']);
const SCRATCH_FLOATS = 65536;
const MAX_ELEMENTS = 2 ** 31 - 1;

/** Adds pe.alibiSlopes and pe.alibiBias to `api` (ctx: see api.js). */
export function attachAlibiApi(api, ctx) {
  const { Module, scratch, withBuffers } = ctx;
  let handle = null; // one core Alibi per instance, made on first use (it holds only its last error)
  const core = () => (handle ??= new Module.Alibi());

  const slopes = (fn, heads) => withBuffers(fn, [heads * 8], (ptr) => {
    if (core().slopes(heads, ptr) !== 0) throw familyError(fn, core());
    return Module.HEAPF64.slice(ptr / 8, ptr / 8 + heads);
  });

  api.alibiSlopes = function alibiSlopes(heads) {
    checkNumber('alibiSlopes', 'heads', heads, { integer: true, min: 1, max: Module.ALIBI_MAX_HEADS });
    return slopes('alibiSlopes', heads);
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
    const dtype = checkDtype(fn, o.dtype);
    const out = dtype ? new Uint16Array(batch * block) : new Float32Array(batch * block);
    const fill = dtype ? roundHalf(maskValue, dtype) : maskValue;
    if (dtype) {
      // 16-bit: per head, a table of the bits of -(m d) for d = offset + queryLength - 1 down to
      // offset - keyLength + 1 (after the query: fill, or |d| when symmetric); row i is a slice.
      const m = slopes(fn, heads);
      const table = new Uint16Array(queryLength + keyLength - 1);
      for (let h = 0, x = 0; h < heads; h++) {
        for (let t = 0, d; t < table.length; t++) {
          d = Math.abs(offset + queryLength - 1 - t);
          table[t] = t < queryLength + offset || mode ? roundHalf(-m[h] * d, dtype, m[h], d) : fill;
        }
        for (let i = queryLength; i--; x += keyLength) out.set(table.subarray(i, i + keyLength), x);
      }
    } else {
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
    }
    // Batch b: a copy of the [heads, q, k] block with its masked keys set to maskValue (the last
    // first: each copies block 0 before block 0 is masked).
    for (let b = batch; b-- > 0; ) {
      if (b) out.copyWithin(b * block, 0, block);
      for (let j = 0; mask && j < keyLength; j++) {
        for (let x = b * block + j; !mask[b * keyLength + j] && x < (b + 1) * block; x += keyLength) out[x] = fill;
      }
    }
    const data = dtype === 1 ? float16View(out) : out;
    return tensor ? { data, dims: [batch, heads, queryLength, keyLength], type: o.dtype ?? 'float32' } : data;
  };
}

/**
 * The float16 (dtype 1) or bfloat16 (2) bits nearest to the number x (ties to even); with m and d,
 * x = -(m d) rounded to float64 (m a slope, at least 2^-8; d an integer), the bits nearest to the
 * exact -(m d): x's own rounding, except at a 16-bit midpoint x, where the exact product decides.
 */
function roundHalf(x, dtype, m = 0, d = 0) {
  const [p, emin] = dtype < 2 ? [11, -14] : [8, -126];
  const a = Math.min(Math.abs(x), 2 ** 200);  // (infinity: past the largest finite 16-bit value)
  let ex = Math.max(emin, Math.floor(Math.log2(a)));
  ex += (2 ** (ex + 1) <= a) - (2 ** ex > a && ex > emin);
  const s = a * 2 ** (p - 1 - ex);  // exact: a power-of-two scaling
  const f = Math.floor(s);
  // At a midpoint: up when m d exceeds a, down when below, to even when they are equal (or no m).
  // ((m d - a) 2^100 is an integer: 0, or at least 1 in size, so f's parity only breaks a tie.)
  const t = s - f - 0.5 || (m && Number(BigInt(m * 2 ** 100) * BigInt(d) - BigInt(a * 2 ** 100))) + (f % 2) / 2;
  // ex - emin + 1 is the exponent field (subnormals: ex = emin, f < 2^(p-1)); f = 2^p carries;
  // infinity: the field 3 - 2 emin (31, 255).
  return ((x < 0 || 1 / x < 0) << 15) | Math.min((3 - 2 * emin) << (p - 1), (ex - emin) * 2 ** (p - 1) + f + (t > 0));
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
