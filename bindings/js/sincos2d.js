// 2D sin-cos position embeddings of vision transformers: pe.encode2d(height, width, dim,
// { preset, base, clsToken, reverseCoord, interleaveSinCos }) returns Float32Array(rows * dim),
// rows = (clsToken ? 1 : 0) + height * width, in the exact order of MAE's get_2d_sincos_pos_embed
// ('mae') or timm's build_sincos2d_pos_embed ('timm'); see posenc/sincos2d.hpp.

import { checkBoolean, checkEnum, checkNumber, checkOptionsObject } from './check.js';
import { checkDtype, halfOut } from './half.js';
import { familyError } from './rotary.js';

export const SINCOS2D_PRESETS = ['mae', 'timm'];
const OPTIONS = new Set(['preset', 'base', 'clsToken', 'reverseCoord', 'interleaveSinCos', 'dtype']);
const SCRATCH_FLOATS = 65536;

/** Adds pe.encode2d to `api` (ctx: see api.js). */
export function attachSincos2dApi(api, ctx) {
  const { Module, scratch } = ctx;

  api.encode2d = function encode2d(height, width, dim, options) {
    const fn = 'encode2d';
    checkNumber(fn, 'height', height, { integer: true, min: 1, max: 65536 });
    checkNumber(fn, 'width', width, { integer: true, min: 1, max: 65536 });
    checkNumber(fn, 'dim', dim, { integer: true, min: 4, max: 65536 });
    if (dim % 4 !== 0) throw new RangeError(`posenc.${fn}: dim must be a multiple of 4 (sin and cos of two coordinates), got ${dim}`);
    const o = checkOptionsObject(fn, options, OPTIONS);
    const cls = checkBoolean(fn, 'clsToken', o.clsToken, false);
    const elements = ((cls ? 1 : 0) + height * width) * dim;
    if (elements > 2 ** 31 - 1) {
      throw new RangeError(`posenc.${fn}: ((clsToken ? 1 : 0) + height * width) * dim must be at most 2^31 - 1, got ${elements}`);
    }
    const preset = o.preset === undefined ? 0 : checkEnum(fn, 'preset', o.preset, SINCOS2D_PRESETS);
    const base = o.base === undefined ? 10000 : checkNumber(fn, 'base', o.base, { above: 1 });
    // dtype 'float16' / 'bfloat16': the core rounds its 1D table once from the exact values and
    // copies 16-bit rows (half.js).
    const dtype = checkDtype(fn, o.dtype);
    const half = dtype === 0 ? null : halfOut(fn, dtype, undefined, elements);
    const request = new Float64Array(Module.SINCOS2D_FIELDS);
    request.set([
      height, width, dim, preset, base,
      cls ? 1 : 0,
      checkBoolean(fn, 'reverseCoord', o.reverseCoord, false) ? 1 : 0,
      checkBoolean(fn, 'interleaveSinCos', o.interleaveSinCos, false) ? 1 : 0,
    ]);
    const table = new Module.Sincos2d();
    try {
      let base0 = scratch(fn, request.length * 8);
      Module.HEAPF64.set(request, base0 / 8);
      if (table.init(base0) !== 0) throw familyError(fn, table);
      const rows = table.rows();
      const out = half ? half.bits : new Float32Array(rows * dim);
      const chunkRows = Math.max(1, Math.min(rows, Math.floor(SCRATCH_FLOATS / dim)));
      base0 = scratch(fn, chunkRows * dim * 4);
      for (let r0 = 0, n = 0; r0 < rows; r0 += n) {
        n = Math.min(chunkRows, rows - r0);
        if (table.writeRows(r0, n, base0, n * dim, dtype) !== 0) throw familyError(fn, table);
        const heap = half ? Module.HEAPU16 : Module.HEAPF32;
        const at = base0 / out.BYTES_PER_ELEMENT;
        out.set(heap.subarray(at, at + n * dim), r0 * dim);
      }
      return half ? half.result : out;
    } finally {
      table.delete();
    }
  };
}
