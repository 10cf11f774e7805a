// ALiBi in the forms Hugging Face's model code builds, in plain JavaScript (no wasm):
//   'bloom'   modeling_bloom.py build_alibi_tensor: float32 slopes torch.pow(base, k) of the float32
//             base 2^(-8/p) (p = 2^floor(log2 heads)), then the odd powers of 2^(-4/p) for the
//             heads past p; times ((mask.cumsum(-1) - 1) * mask) in float32, [batch * heads, 1, keys]
//   'falcon'  modeling_falcon.py build_alibi_tensor: BLOOM's, with the slopes cast to bfloat16 and,
//             with an integer mask, a bfloat16 product (positions cast to bfloat16 first)
//   'mpt'     modeling_mpt.py build_mpt_alibi_tensor: arange(1 - keys, 1) times the float32
//             1 / 2^(k * float32(alibiBiasMax / n2)) (n2 = 2^ceil(log2 heads); odd k first, then even,
//             when heads is not n2), [heads, 1, keys]
// Every float32 step is one rounding of the exact result, which is what PyTorch computes except in
// its pow: torch's float32 pow is not correctly rounded and differs between its kernels (glibc's
// powf in scalar code, SLEEF's in AVX2 / AVX-512 loops), so its slopes differ by one ulp between
// machines for some head counts (docs/API.md, "ALiBi in the models' forms"). posenc takes the
// float32 nearest to the double b^k (Math.pow, within an ulp of a double): the correctly rounded
// float32 power for every base and power of BLOOM's slopes up to 8192 heads (the fixture checks
// each against exact rationals), and within one float32 ulp of it beyond.
// tests/fixtures/alibi/gen_alibi_models.py holds the ports and PyTorch's values.

import { checkEnum, checkNumber, checkOptionsObject, parseConfig, typeError } from './check.js';
import { bfloat16Bits, FLOAT_DTYPES, float16Bits, float16View } from './float16.js';
import { OUTPUT_FORMS, readIntegers } from './tensor.js';

const f32 = Math.fround;
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** x (a float32 value) rounded to bfloat16, ties to even. */
const bf16 = (x) => {
  F32[0] = x;
  U32[0] = (U32[0] + 0x7fff + ((U32[0] >>> 16) & 1)) & 0xffff0000;
  return F32[0];
};

/**
 * The model's bias into `out`: model 0 'bloom' or 1 'falcon' [batch * heads, 1, keys] from mask (0/1
 * values, batch rows of `keys`; null: all ones), 2 'mpt' [heads, 1, keys] (batch 1, no mask).
 */
export function writeModelBias(out, model, heads, keys, mask, batch, biasMax) {
  const round = model === 1 ? bf16 : f32;
  const p = 2 ** Math.floor(Math.log2(heads));
  const n2 = 2 ** Math.ceil(Math.log2(heads));
  const position = new Float64Array(keys);
  for (let b = 0, o = 0; b < batch; b++) {
    // BLOOM: (cumsum(mask) - 1) * mask, the count of unmasked keys before j (0 at masked keys),
    // cast to the slopes' type; MPT: arange(1 - keys, 1).
    for (let j = 0, seen = 0; j < keys; j++) {
      const m = mask ? mask[b * keys + j] : 1;
      position[j] = round(model > 1 ? j + 1 - keys : m && seen);
      seen += m;
    }
    for (let h = 0; h < heads; h++) {
      // BLOOM: base^(h + 1), base = float32(2^(-8/p)); past p heads the odd powers of 2^(-4/p).
      // MPT: 1 / 2^(k * float32(biasMax / n2)), k = h + 1, or k = 2, 4, ... then 1, 3, ... when
      // heads is not n2 (its slopes[1::2] then slopes[::2]).
      const slope = model > 1
        ? f32(1 / f32(2 ** f32(f32(biasMax / n2) * (n2 === heads ? h + 1 : 2 * h < n2 ? 2 * h + 2 : 2 * h - n2 + 1))))
        : round(h < p ? f32(f32(2 ** (-8 / p)) ** (h + 1)) : f32(f32(2 ** (-4 / p)) ** (2 * (h - p) + 1)));
      // A Float32Array store rounds the exact double product once; Falcon rounds to bfloat16.
      if (model === 1) for (let j = 0; j < keys; j++) out[o++] = bf16(slope * position[j]);
      else for (let j = 0; j < keys; j++) out[o++] = slope * position[j];
    }
  }
}

/** build_alibi_tensor's float32 slopes (BLOOM; Falcon before its bfloat16 cast), for tests and benches. */
export function bloomSlopes(heads) {
  const out = new Float32Array(heads * 2);
  writeModelBias(out, 0, heads, 2, null, 1);
  return out.filter((_, i) => i % 2);
}

/** build_mpt_alibi_tensor's float32 slopes, for tests and benches. */
export function mptSlopes(heads, biasMax) {
  const out = new Float32Array(heads * 2);
  writeModelBias(out, 2, heads, 2, null, 1, biasMax);
  return out.filter((_, i) => i % 2 === 0).map((v) => -v);
}

export const ALIBI_MODELS = ['bloom', 'falcon', 'mpt'];

/**
 * What a model's config.json says of its ALiBi: { model (index into ALIBI_MODELS), heads, biasMax }.
 * bloom: n_head; falcon (alibi must be true, else it uses RoPE): num_attention_heads; mpt: n_heads
 * and attn_config.alibi_bias_max (which Hugging Face's MptModel does not pass on: it always uses 8;
 * MosaicML's own attention.py does). Hugging Face's config-class defaults where a key is absent
 * (BloomConfig 8 heads, FalconConfig 71, MptConfig 16). Another model_type is a RangeError naming
 * the types read.
 */
export function readAlibiConfig(fn, c) {
  const model = ALIBI_MODELS.indexOf(c?.model_type);
  if (model < 0 || (model === 1 && c.alibi !== true)) {
    const what = model === 1 ? `a Falcon config with alibi true (without it Falcon uses RoPE), got alibi ${c.alibi}` : `config.model_type one of '${ALIBI_MODELS.join("', '")}', got ${JSON.stringify(c?.model_type)}`;
    throw new RangeError(`posenc.${fn}: ALiBi is read from ${what}`);
  }
  const heads = [c.n_head ?? 8, c.num_attention_heads ?? 71, c.n_heads ?? 16][model];
  const biasMax = model === 2 ? c.attn_config?.alibi_bias_max ?? 8 : 8;
  return { model, heads, biasMax };
}

const MODEL_BIAS_OPTIONS = new Set(['model', 'config', 'heads', 'attentionMask', 'batch', 'alibiBiasMax', 'dtype', 'as']);

/**
 * The ALiBi bias a model's own code builds (posenc/relative's alibiModelBias): BLOOM / Falcon
 * [batch * heads, 1, keyLength] from a key padding mask (attention_mask, 1 = attend; all ones when
 * absent), MPT [heads, 1, keyLength]. From { model, heads } or a whole config.json ({ config }).
 * dtype 'float16' / 'bfloat16' is the model's `.to(dtype)` of the float32 result (one rounding,
 * ties to even); as: 'tensor' gives { data, dims, type }.
 */
export function alibiModelBias(keyLength, options) {
  const fn = 'alibiModelBias';
  const o = checkOptionsObject(fn, options, MODEL_BIAS_OPTIONS);
  let model;
  let heads;
  let biasMax = 8;
  if (o.config !== undefined) {
    if (o.model !== undefined || o.heads !== undefined) throw new TypeError(`posenc.${fn}: give config, or model and heads, not both`);
    ({ model, heads, biasMax } = readAlibiConfig(fn, parseConfig(fn, o.config, "a model's config.json (an object or its JSON text)")));
  } else {
    if (o.model === undefined) throw typeError(fn, 'model', `one of '${ALIBI_MODELS.join("', '")}' (or give config)`, undefined);
    model = checkEnum(fn, 'model', o.model, ALIBI_MODELS);
    heads = checkNumber(fn, 'heads', o.heads, { integer: true, min: 1, max: 65536 });
  }
  if (o.alibiBiasMax !== undefined) {
    if (model !== 2) throw new TypeError(`posenc.${fn}: alibiBiasMax is MPT's (model 'mpt'), not ${ALIBI_MODELS[model]}'s`);
    biasMax = checkNumber(fn, 'alibiBiasMax', o.alibiBiasMax, { above: 0 });
  }
  const keys = checkNumber(fn, 'keyLength', keyLength, { integer: true, min: 1, max: 2 ** 24 });
  if (model === 2 && (o.attentionMask !== undefined || o.batch !== undefined)) {
    throw new TypeError(`posenc.${fn}: MPT's bias has no mask and no batch ([heads, 1, keys]); it goes with ${o.attentionMask !== undefined ? 'attentionMask' : 'batch'} only for 'bloom' and 'falcon'`);
  }
  let batch = o.batch === undefined ? 1 : checkNumber(fn, 'batch', o.batch, { integer: true, min: 1, max: 2 ** 24 });
  let mask = null;
  if (o.attentionMask !== undefined) {
    const { values, dims } = readIntegers(fn, 'attentionMask', o.attentionMask, { min: 0, max: 1 });
    if (dims.length === 2) {
      if (o.batch !== undefined && o.batch !== dims[0]) throw new RangeError(`posenc.${fn}: batch ${o.batch} disagrees with attentionMask's dims [${dims}]`);
      batch = dims[0];
    }
    if (dims.length > 2 || values.length !== batch * keys) {
      throw new RangeError(`posenc.${fn}: attentionMask must be [batch, keyLength] = [${batch}, ${keys}] (rows, or batch * keyLength values), got dims [${dims}]`);
    }
    mask = values;
  }
  const rows = model === 2 ? heads : batch * heads;
  if (rows * keys > 2 ** 31 - 1) throw new RangeError(`posenc.${fn}: the bias would hold ${rows * keys} values, more than 2^31 - 1`);
  const dtype = o.dtype === undefined ? 0 : checkEnum(fn, 'dtype', o.dtype, FLOAT_DTYPES);
  const tensor = o.as === undefined ? false : checkEnum(fn, 'as', o.as, OUTPUT_FORMS) === 1;
  const values = new Float32Array(rows * keys);
  writeModelBias(values, model, heads, keys, mask, batch, biasMax);
  let data = values;
  if (dtype > 0) {
    const round = dtype === 1 ? float16Bits : bfloat16Bits;
    const bits = new Uint16Array(values.length);
    for (let i = 0; i < values.length; i++) bits[i] = round(values[i]);
    data = dtype === 1 ? float16View(bits) : bits;
  }
  return tensor ? { data, dims: [rows, 1, keys], type: FLOAT_DTYPES[dtype] } : data;
}
