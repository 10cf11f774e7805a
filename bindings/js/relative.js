// Entry `posenc/relative`: the relative position buckets and biases of T5 and DeBERTa, plain
// JavaScript with no wasm and no init(). A bucket depends only on the distance between query and
// key, so each call computes one bucket per distance (queryLength + keyLength - 1 of them, each
// with at most one float32 logarithm) and writes every row of its [q, k] output as a copy of a
// slice of that list: the output's bytes are written once.
//
// Ported (re-written from reading, not copied) from huggingface/transformers:
//   src/transformers/models/t5/modeling_t5.py
//     T5Attention._relative_position_bucket   the bucket of key - query: exact below max_exact,
//         then max_exact + (log(d / max_exact) / log(max_distance / max_exact) * (n - max_exact))
//         in float32, truncated by .to(torch.long), capped at n - 1   -> t5Bucket()
//     T5Attention.compute_bias                 key - (cache_position + query), bidirectional =
//         not is_decoder, relative_attention_bias gathered and permuted to [heads, q, k]
//   src/transformers/models/umt5/modeling_umt5.py, pix2struct/modeling_pix2struct.py (same
//     function; Pix2Struct's text attention passes bidirectional=False; its vision encoder and
//     every cross-attention have no relative bias)
//   src/transformers/models/deberta_v2/modeling_deberta_v2.py
//     make_log_bucket_position, build_relative_position   -> debertaBucket()
//     DisentangledSelfAttention (pos_ebd_size = position_buckets if > 0 else
//     max_relative_positions, which max_position_embeddings replaces when < 1) and
//     disentangled_attention_bias (c2p_pos = clamp(relative_pos + att_span, 0, 2 att_span - 1),
//     p2c_pos = clamp(-r_pos + att_span, ...), r_pos from build_rpos)
// Every float32 step is the one those functions take on a CPU tensor (int64 / int is a float32
// division, a Python float entering a float32 operation is rounded to float32), with a correctly
// rounded float32 log (float32_log.js). tests/fixtures/relative/ holds PyTorch's own values.

import { checkBoolean, checkEnum, checkFloat32Array, checkNumber, checkOptionsObject, checkTypedArray, describe, parseConfig, typeError } from './check.js';
import { bfloat16Bits, FLOAT_DTYPES, float16Bits, float16View } from './float16.js';
import { logDoubleDouble, logf } from './float32_log.js';
import { isTensorLike, OUTPUT_FORMS, readOutputOptions, readTensor } from './tensor.js';

export { ALIBI_MODELS, alibiModelBias } from './alibi_models.js';

const f32 = Math.fround;
const MAX_LENGTH = 2 ** 24;
const MAX_ELEMENTS = 2 ** 31 - 1;
const MAX_POSITION = 2 ** 31 - 1;

const T5_OPTIONS = ['numBuckets', 'maxDistance', 'bidirectional', 'offset', 'config', 'attention'];
const BUCKET_OPTIONS = new Set(['scheme', ...T5_OPTIONS, 'positionBuckets', 'maxRelativePositions', 'maxPositionEmbeddings', 'output', 'dtype', 'as']);
const BIAS_OPTIONS = new Set([...T5_OPTIONS, 'out', 'as', 'dtype']);
const SCHEMES = ['t5', 'deberta'];
const ATTENTIONS = ['encoder', 'decoder'];
const DEBERTA_OUTPUTS = ['relative', 'c2p', 'p2c'];

/** The model types whose config.json relativeBuckets and relativeBias read, and where the keys are. */
export const RELATIVE_MODEL_TYPES = Object.freeze(['t5', 'mt5', 'umt5', 'pix2struct', 'deberta-v2']);

const fail = (fn, message) => new RangeError(`posenc.${fn}: ${message}`);

// ---- T5 -----------------------------------------------------------------------------------

/**
 * The T5 setting: n buckets per direction, maxExact, the float32 divisor log(maxDistance /
 * maxExact) (Python's float64 log, rounded to float32) and the float32 factor n - maxExact.
 */
function t5Setting(fn, numBuckets, maxDistance, bidirectional) {
  const n = bidirectional ? Math.floor(numBuckets / 2) : numBuckets;
  const maxExact = Math.floor(n / 2);
  if (maxExact < 1) {
    throw fail(fn, `numBuckets must be at least ${bidirectional ? 4 : 2} (${bidirectional ? 'bidirectional' : 'causal'}: maxExact = ${bidirectional ? 'numBuckets / 4' : 'numBuckets / 2'} >= 1), got ${numBuckets}`);
  }
  if (!(maxDistance > maxExact)) {
    throw fail(fn, `maxDistance must be greater than maxExact = ${maxExact} (the log buckets lie between them), got ${maxDistance}`);
  }
  const key = maxDistance / maxExact;
  let divisor = divisors.get(key);
  if (divisor === undefined) {
    if (divisors.size > 64) divisors.clear();
    divisors.set(key, (divisor = f32(logDoubleDouble(key)[0])));
  }
  return { n, maxExact, maxDistance, divisor, factor: f32(n - maxExact), bidirectional };
}

// The float32 divisors of the settings seen (a decoding step should not redo the double-double log).
const divisors = new Map();

/** T5Attention._relative_position_bucket of one relative position r = key - query. */
function t5Bucket(s, r) {
  let base = 0;
  let d;
  if (s.bidirectional) {
    if (r > 0) base = s.n;
    d = Math.abs(r);
  } else {
    d = r < 0 ? -r : 0;
  }
  if (d < s.maxExact) return base + d;
  // From maxDistance on, the float32 value before truncation is at least n - maxExact - 1 (the
  // chain is monotone in d, and at d = maxDistance it is within 2^-22 relative of n - maxExact), so
  // maxExact + trunc(v) >= n - 1 and the cap gives the last bucket, n - 1: no log needed.
  if (d >= s.maxDistance) return base + s.n - 1;
  const v = f32(f32(logf(f32(f32(d) / s.maxExact)) / s.divisor) * s.factor);
  return base + Math.min(s.maxExact + Math.trunc(v), s.n - 1);
}

// ---- DeBERTa ------------------------------------------------------------------------------

/**
 * build_relative_position's value for r = query - key: make_log_bucket_position(r, bucketSize,
 * maxPosition) when both are > 0, else r.
 */
function debertaSetting(fn, bucketSize, maxPosition, names) {
  if (!(bucketSize > 0 && maxPosition > 0)) return null;
  const mid = Math.floor(bucketSize / 2);
  if (mid === 0) throw fail(fn, `${names[0]} must be at least 2 when it is positive (Hugging Face divides by ${names[0]} // 2), got ${bucketSize}`);
  const divisor = logf(f32((maxPosition - 1) / mid));
  if (divisor === 0) {
    throw fail(fn, `${names[1]} - 1 must differ from ${names[0]} // 2 = ${mid} (the log divisor is 0), got ${maxPosition}`);
  }
  return { mid, divisor, factor: f32(mid - 1) };
}

function debertaBucket(s, r) {
  if (s === null) return r;
  const a = Math.abs(r);
  if (a <= s.mid) return r;
  const v = f32(f32(logf(f32(f32(a) / s.mid)) / s.divisor) * s.factor);
  const logPos = f32(Math.ceil(v) + s.mid);
  return r < 0 ? -logPos : logPos;
}

// ---- configs ------------------------------------------------------------------------------

function readConfig(fn, config) {
  const c = parseConfig(fn, config, "a model's config.json object (or its JSON text)");
  const modelType = c.model_type;
  if (typeof modelType !== 'string' || !RELATIVE_MODEL_TYPES.includes(modelType)) {
    const hint = modelType === 'deberta' ? " (DeBERTa v1's relative positions are not log buckets: not read)" : '';
    throw fail(fn, `config.model_type must be one of '${RELATIVE_MODEL_TYPES.join("', '")}', got ${describe(modelType)}${hint}`);
  }
  return c;
}

function configInteger(fn, object, prefix, key, fallback) {
  const v = object[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw fail(fn, `config.${prefix}${key} must be an integer, got ${describe(v)}`);
  }
  return v;
}

/** A T5-family config's self-attention bias: { numBuckets, maxDistance, bidirectional }. */
function t5FromConfig(fn, c, attention) {
  if (c.model_type === 'deberta-v2') throw fail(fn, "config is DeBERTa's (model_type 'deberta-v2'): pass scheme: 'deberta'");
  if (attention === undefined) {
    throw new TypeError(`posenc.${fn}: attention must be given with config: 'encoder' (bidirectional) or 'decoder' (causal) self-attention`);
  }
  const decoder = checkEnum(fn, 'attention', attention, ATTENTIONS) === 1;
  let keys = c;
  let prefix = '';
  if (c.model_type === 'pix2struct') {
    if (!decoder) throw fail(fn, "Pix2Struct's vision encoder has no relative position bias (only its text decoder has one): pass attention: 'decoder'");
    keys = c.text_config ?? {};
    prefix = 'text_config.';
    if (typeof keys !== 'object' || Array.isArray(keys)) throw fail(fn, `config.text_config must be an object, got ${describe(keys)}`);
  }
  const numBuckets = configInteger(fn, keys, prefix, 'relative_attention_num_buckets', 32);
  const maxDistance = configInteger(fn, keys, prefix, 'relative_attention_max_distance', 128);
  if (numBuckets < 2 || numBuckets > 65536) throw fail(fn, `config.${prefix}relative_attention_num_buckets must be from 2 to 65536, got ${numBuckets}`);
  if (maxDistance < 1 || maxDistance > MAX_POSITION) throw fail(fn, `config.${prefix}relative_attention_max_distance must be from 1 to 2^31 - 1, got ${maxDistance}`);
  return { numBuckets, maxDistance, bidirectional: !decoder };
}

// ---- arguments ----------------------------------------------------------------------------

function lengths(fn, queryLength, keyLength, heads = 1) {
  const q = checkNumber(fn, 'queryLength', queryLength, { integer: true, min: 1, max: MAX_LENGTH });
  const k = checkNumber(fn, 'keyLength', keyLength, { integer: true, min: 1, max: MAX_LENGTH });
  if (q * k * heads > MAX_ELEMENTS) {
    throw fail(fn, `the output would hold ${heads > 1 ? 'heads * ' : ''}queryLength * keyLength = ${q * k * heads} values, more than 2^31 - 1`);
  }
  return [q, k];
}

/** The T5 setting and offset of a call's options. */
function t5Options(fn, o, q) {
  let setting;
  if (o.config !== undefined) {
    for (const name of ['numBuckets', 'maxDistance', 'bidirectional']) {
      if (o[name] !== undefined) throw new TypeError(`posenc.${fn}: give config or ${name}, not both`);
    }
    setting = t5FromConfig(fn, readConfig(fn, o.config), o.attention);
  } else {
    if (o.attention !== undefined) throw new TypeError(`posenc.${fn}: attention goes with config (without it, say bidirectional)`);
    setting = {
      numBuckets: o.numBuckets === undefined ? 32 : checkNumber(fn, 'numBuckets', o.numBuckets, { integer: true, min: 2, max: 65536 }),
      maxDistance: o.maxDistance === undefined ? 128 : checkNumber(fn, 'maxDistance', o.maxDistance, { integer: true, min: 1, max: MAX_POSITION }),
      bidirectional: checkBoolean(fn, 'bidirectional', o.bidirectional, true),
    };
  }
  const offset = o.offset === undefined ? 0 : checkNumber(fn, 'offset', o.offset, { integer: true, min: 0, max: MAX_POSITION });
  if (offset + q - 1 > MAX_POSITION) throw fail(fn, `offset + queryLength - 1 must be at most 2^31 - 1, got ${offset + q - 1}`);
  return { s: t5Setting(fn, setting.numBuckets, setting.maxDistance, setting.bidirectional), offset, numBuckets: setting.numBuckets };
}

/**
 * The bucket of every distance of a [q, k] grid: list[u] for u = j - i + q - 1 (row i is
 * list[q - 1 - i .. q - 1 - i + k)).
 */
function t5Distances(s, q, k, offset) {
  const list = new Int32Array(q + k - 1);
  // key j, query offset + i: r = j - i - offset = u - (q - 1) - offset
  const r0 = -(q - 1) - offset;
  for (let u = 0; u < list.length; u++) list[u] = t5Bucket(s, u + r0);
  return list;
}

/** Writes rows i of a [q, k] block at `at`: row i = list[q - 1 - i ..]. */
function spread(out, at, list, q, k) {
  out.set(list.subarray(q - 1, q - 1 + k), at);
  // Row i is row i - 1 moved one column right, with list[q - 1 - i] in front: a copy within out.
  for (let i = 1; i < q; i++) {
    const row = at + i * k;
    if (k > 1) out.copyWithin(row + 1, row - k, row - 1);
    out[row] = list[q - 1 - i];
  }
}

function gridOf(list, q, k, Type) {
  const out = new Type(q * k);
  spread(out, 0, Type === BigInt64Array ? BigInt64Array.from(list, BigInt) : list, q, k);
  return out;
}

// ---- DeBERTa options ----------------------------------------------------------------------

function debertaOptions(fn, o) {
  for (const name of T5_OPTIONS) {
    if (name !== 'config' && o[name] !== undefined) throw new TypeError(`posenc.${fn}: ${name} is a T5 option (scheme 'deberta' takes positionBuckets, maxRelativePositions, maxPositionEmbeddings, config, output)`);
  }
  let positionBuckets;
  let maxRelative;
  let maxPositions;
  if (o.config !== undefined) {
    for (const name of ['positionBuckets', 'maxRelativePositions', 'maxPositionEmbeddings']) {
      if (o[name] !== undefined) throw new TypeError(`posenc.${fn}: give config or ${name}, not both`);
    }
    const c = readConfig(fn, o.config);
    if (c.model_type !== 'deberta-v2') throw fail(fn, `scheme 'deberta' reads a config of model_type 'deberta-v2', got '${c.model_type}'`);
    if (c.relative_attention !== true) {
      throw fail(fn, `config.relative_attention must be true for relative positions (DebertaV2Config's default is false), got ${describe(c.relative_attention)}`);
    }
    positionBuckets = configInteger(fn, c, '', 'position_buckets', -1);
    maxRelative = configInteger(fn, c, '', 'max_relative_positions', -1);
    maxPositions = configInteger(fn, c, '', 'max_position_embeddings', 512);
    if (maxRelative < 1 && maxPositions < 1) throw fail(fn, `config.max_position_embeddings must be at least 1, got ${maxPositions}`);
  } else {
    const int = (name, value, fallback, min) => (value === undefined ? fallback : checkNumber(fn, name, value, { integer: true, min, max: MAX_POSITION }));
    positionBuckets = int('positionBuckets', o.positionBuckets, 256, -MAX_POSITION);
    maxRelative = int('maxRelativePositions', o.maxRelativePositions, -1, -MAX_POSITION);
    maxPositions = int('maxPositionEmbeddings', o.maxPositionEmbeddings, 512, 1);
  }
  if (maxRelative < 1) maxRelative = maxPositions;
  const attSpan = positionBuckets > 0 ? positionBuckets : maxRelative;
  return { positionBuckets, maxRelative, attSpan };
}

/** DeBERTa: query - key per distance, list[u] for u = j - i + q - 1 (r = q - 1 - u). */
function debertaDistances(s, q, k) {
  const list = new Float64Array(q + k - 1);
  for (let u = 0; u < list.length; u++) list[u] = debertaBucket(s, q - 1 - u);
  return list;
}

function clampIndex(list, sign, attSpan) {
  const out = new Int32Array(list.length);
  const top = 2 * attSpan - 1;
  for (let u = 0; u < list.length; u++) out[u] = Math.min(Math.max(sign * list[u] + attSpan, 0), top);
  return out;
}

function debertaGrid(fn, q, k, o) {
  const d = debertaOptions(fn, o);
  const output = o.output === undefined ? 0 : checkEnum(fn, 'output', o.output, DEBERTA_OUTPUTS);
  const names = ['positionBuckets', 'maxRelativePositions'];
  if (output === 2 && q !== k) {
    // disentangled_attention_bias with q != k: r_pos = build_rpos(...) = build_relative_position(
    // key, key, bucket_size=max_relative_positions, max_position=position_buckets): HF passes the
    // two settings in swapped order (see the README); the result is [k, k].
    if (k * k > MAX_ELEMENTS) throw fail(fn, `output 'p2c' with queryLength != keyLength is [keyLength, keyLength] = ${k * k} values, more than 2^31 - 1`);
    const swapped = debertaSetting(fn, d.maxRelative, d.positionBuckets, [names[1], names[0]]);
    return { list: clampIndex(debertaDistances(swapped, k, k), -1, d.attSpan), rows: k, cols: k };
  }
  const list = debertaDistances(debertaSetting(fn, d.positionBuckets, d.maxRelative, names), q, k);
  if (output === 0) return { list, rows: q, cols: k };
  return { list: clampIndex(list, output === 1 ? 1 : -1, d.attSpan), rows: q, cols: k };
}

// ---- the API ------------------------------------------------------------------------------

/**
 * relativeBuckets(queryLength, keyLength, options): the bucket of every (query, key) pair,
 * [q, k] row-major. T5 (scheme 't5', the default): T5Attention._relative_position_bucket of
 * key - (offset + query). DeBERTa (scheme 'deberta'): build_relative_position's query - key, or
 * (output 'c2p' | 'p2c') the gather indices DisentangledSelfAttention forms from it.
 */
export function relativeBuckets(queryLength, keyLength, options) {
  const fn = 'relativeBuckets';
  const o = checkOptionsObject(fn, options, BUCKET_OPTIONS);
  const [q, k] = lengths(fn, queryLength, keyLength);
  const scheme = o.scheme === undefined ? 0 : checkEnum(fn, 'scheme', o.scheme, SCHEMES);
  const { dtype, tensor } = readOutputOptions(fn, o);
  let grid;
  if (scheme === 1) {
    grid = debertaGrid(fn, q, k, o);
  } else {
    for (const name of ['positionBuckets', 'maxRelativePositions', 'maxPositionEmbeddings', 'output']) {
      if (o[name] !== undefined) throw new TypeError(`posenc.${fn}: ${name} is a DeBERTa option (pass scheme: 'deberta')`);
    }
    const { s, offset } = t5Options(fn, o, q);
    grid = { list: t5Distances(s, q, k, offset), rows: q, cols: k };
  }
  const { list, rows, cols } = grid;
  let data;
  if (dtype === 'int64') {
    data = gridOf(list, rows, cols, BigInt64Array);
  } else {
    const ints = list instanceof Int32Array ? list : Int32Array.from(list);
    for (let u = 0; u < list.length; u++) {
      if (ints[u] !== list[u]) throw fail(fn, `a relative position (${list[u]}) is outside the int32 range; pass dtype: 'int64'`);
    }
    data = gridOf(ints, rows, cols, Int32Array);
  }
  return tensor ? { data, dims: [rows, cols], type: dtype } : data;
}

/**
 * relativeBias(table, heads, queryLength, keyLength, options): T5Attention.compute_bias, the
 * learned bias of every (head, query, key), [heads, q, k]: table[bucket(key - (offset + query))
 * * heads + head], with `table` the relative_attention_bias weight [numBuckets, heads].
 */
export function relativeBias(table, heads, queryLength, keyLength, options) {
  const fn = 'relativeBias';
  const o = checkOptionsObject(fn, options, BIAS_OPTIONS);
  const h = checkNumber(fn, 'heads', heads, { integer: true, min: 1, max: 65536 });
  let weights;
  if (isTensorLike(table)) {
    const t = readTensor(fn, 'table', table);
    if (t.dims.length !== 2 || t.dims[1] !== h) {
      throw fail(fn, `table.dims must be [numBuckets, heads = ${h}], got [${t.dims}]`);
    }
    weights = checkFloat32Array(fn, 'table.data', t.data);
  } else {
    weights = checkFloat32Array(fn, 'table', table);
  }
  const [q, k] = lengths(fn, queryLength, keyLength, h);
  const { s, offset, numBuckets } = t5Options(fn, o, q);
  const expected = numBuckets * h;
  if (weights.length !== expected) {
    throw fail(fn, `table must hold numBuckets * heads = ${numBuckets} * ${h} = ${expected} floats ([numBuckets, heads], relative_attention_bias.weight), got ${weights.length}`);
  }
  const tensor = o.as === undefined ? false : checkEnum(fn, 'as', o.as, OUTPUT_FORMS) === 1;
  const dtype = o.dtype === undefined ? 0 : checkEnum(fn, 'dtype', o.dtype, FLOAT_DTYPES);
  const size = h * q * k;
  let out;
  if (o.out === undefined) {
    out = dtype === 0 ? new Float32Array(size) : new Uint16Array(size);
  } else if (dtype === 0) {
    out = checkFloat32Array(fn, 'out', o.out);
  } else {
    // 16-bit values go in as bits: a Uint16Array, or a Float16Array viewed as one.
    const F16 = globalThis.Float16Array;
    const expected = `a Uint16Array${typeof F16 === 'function' ? ' or a Float16Array' : ''} (dtype '${FLOAT_DTYPES[dtype]}')`;
    const view = typeof F16 === 'function' && o.out instanceof F16 ? checkTypedArray(fn, 'out', o.out, F16, expected) : checkTypedArray(fn, 'out', o.out, Uint16Array, expected);
    out = new Uint16Array(view.buffer, view.byteOffset, view.length);
  }
  if (out.length !== size) throw fail(fn, `out must hold heads * queryLength * keyLength = ${size} values, got ${out.length}`);
  const buckets = t5Distances(s, q, k, offset);
  // Each value is a table entry, so its 16-bit value is the entry rounded once (to nearest, ties
  // to even, as torch's .to(float16 / bfloat16)): the table is rounded first (numBuckets * heads
  // values; a grid has q + k - 1 distances per head, 32 buckets by default), then gathered as bits.
  let values = weights;
  if (dtype !== 0) {
    const round = dtype === 1 ? float16Bits : bfloat16Bits;
    values = new Uint16Array(weights.length);
    for (let i = 0; i < weights.length; i++) values[i] = round(weights[i]);
  }
  const row = dtype === 0 ? new Float32Array(buckets.length) : new Uint16Array(buckets.length);
  for (let head = 0; head < h; head++) {
    for (let u = 0; u < buckets.length; u++) row[u] = values[buckets[u] * h + head];
    spread(out, head * q * k, row, q, k);
  }
  const result = o.out !== undefined ? o.out : dtype === 1 ? float16View(out) : out;
  return tensor ? { data: result, dims: [1, h, q, k], type: FLOAT_DTYPES[dtype] } : result;
}
