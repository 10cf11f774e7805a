// ALiBi: pe.alibiSlopes(heads) (the paper's get_slopes, float64) and
// pe.alibiBias(heads, queryLength, keyLength, { mode, offset }) (float32 [heads, q, k], written by
// the core in chunks of rows through the scratch region and copied into a JS-owned array).

import { checkEnum, checkNumber, checkOptionsObject } from './check.js';
import { familyError } from './rotary.js';

export const ALIBI_MODES = ['causal', 'symmetric'];
const BIAS_OPTIONS = new Set(['mode', 'offset']);
const SCRATCH_FLOATS = 65536;
const MAX_ELEMENTS = 2 ** 31 - 1;
// Field indices of the request rotary_bindings.cpp reads (AlibiField).
const F = { heads: 0, queries: 1, keys: 2, mode: 3, offset: 4, firstRow: 5, rowCount: 6, out: 7, outLen: 8 };

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
    if (heads * queryLength * keyLength > MAX_ELEMENTS) {
      throw new RangeError(`posenc.${fn}: heads * queryLength * keyLength must be at most 2^31 - 1, got ${heads * queryLength * keyLength}`);
    }
    const o = checkOptionsObject(fn, options, BIAS_OPTIONS);
    const mode = o.mode === undefined ? 0 : checkEnum(fn, 'mode', o.mode, ALIBI_MODES);
    const offset = o.offset === undefined ? 0 : checkNumber(fn, 'offset', o.offset, { integer: true, min: 0, max: 2 ** 31 - 1 });
    const rows = heads * queryLength;
    const out = new Float32Array(rows * keyLength);
    const chunkRows = Math.max(1, Math.min(rows, Math.floor(SCRATCH_FLOATS / keyLength)));
    const dataBytes = Math.ceil((chunkRows * keyLength * 4) / 16) * 16;
    const base = scratch(fn, dataBytes + 9 * 8);
    const request = new Float64Array(9);
    request[F.heads] = heads;
    request[F.queries] = queryLength;
    request[F.keys] = keyLength;
    request[F.mode] = mode;
    request[F.offset] = offset;
    request[F.out] = base;
    for (let r0 = 0, n = 0; r0 < rows; r0 += n) {
      n = Math.min(chunkRows, rows - r0);
      request[F.firstRow] = r0;
      request[F.rowCount] = n;
      request[F.outLen] = n * keyLength;
      Module.HEAPF64.set(request, (base + dataBytes) / 8);
      if (core().biasRows(base + dataBytes) !== 0) throw familyError(fn, core());
      out.set(Module.HEAPF32.subarray(base / 4, base / 4 + n * keyLength), r0 * keyLength);
    }
    return out;
  };
}
