// A decoder block exported from PyTorch (tests/fixtures/onnxruntime/decoder_block.onnx and its
// float16 copy) run in onnxruntime-web with its positions from posenc: RoPE's cos_cache /
// sin_cache, and an additive attention bias (a causal mask, or ALiBi). The code that decoder-block.mjs
// (Node), browser.mjs (the page) and tests/js/onnxruntime-example.test.mjs share: plain JavaScript,
// no Node or DOM imports; onnxruntime-web (`ort`) and posenc (`pe`, from init()) are passed in.
//
// The graph's inputs:                               what posenc gives
//   x           [1, seq, 64]                         (the token states: the fixture's)
//   cos_cache   [seq, 16]   HF's layout              rot.cosSin(seq, { offset }).cos, Float32Array(seq * 16)
//   sin_cache   [seq, 16]                            ... .sin
//   attn_bias   [1, 4, seq, past + seq]  additive    pe.alibiBias(4, seq, past + seq, { offset }): [heads, q, k]
//               or [1, 1, seq, past + seq]           pe.attentionMask(config, { queryLength, offset }): 1 = may
//                                                    attend, [q, k] Uint8Array -> 0 / -Infinity
//   past_key    [1, 4, past, 16]  (rotated keys)     the previous run's present_key
//   past_value  [1, 4, past, 16]                     the previous run's present_value
// The float16 graph takes the same inputs as float16 (positionInputs(..., 'float16'): posenc's
// dtype option, no conversion in JavaScript).
// Outputs: y [1, seq, 64], present_key / present_value [1, 4, past + seq, 16].

import { fromFloat16, toFloat16Bits } from './float16.mjs';

export const MODEL = Object.freeze({ dModel: 64, heads: 4, headDim: 16, ropeBase: 10000 });

/**
 * The mask value of the float16 graph. float16's largest finite value is 65504; a finite mask keeps
 * a row whose every key is masked from turning into NaN (softmax of -inf only), and -65504 + score
 * is still far below any unmasked score, so exp() of it is 0 in the float32 the kernels compute in.
 */
export const FLOAT16_MASK = -65504;

/** The RoPE keys of a Llama-style config.json of this block, for pe.attentionMask (Llama's rule). */
export const BLOCK_CONFIG = Object.freeze({ hidden_size: 64, num_attention_heads: 4, rope_theta: 10000 });

/**
 * posenc's position inputs of one run: `positional` 'rope' (RoPE caches and a causal mask) or
 * 'alibi' (no rotation: cos 1, sin 0; ALiBi's causal bias). Queries sit at offset .. offset + q - 1,
 * keys at 0 .. offset + q - 1 (the past first). `dtype` 'float16' gives the float16 graph's inputs
 * straight from posenc (each value rounded once from the exact one; masked keys FLOAT16_MASK):
 * Uint16Array bits, or Float16Arrays where the engine has them.
 * @returns {{ cos, sin, bias, biasDims: number[] }} Float32Arrays, or 16-bit data for 'float16'
 */
export function positionInputs(pe, rotary, { positional, queryLength, offset = 0 }, dtype = 'float32') {
  const keyLength = offset + queryLength;
  const half = dtype === 'float16';
  if (positional === 'rope') {
    const { cos, sin } = rotary.cosSin(queryLength, { offset, dtype }); // [q, 16] each: graph-ready, no reshape
    const allowed = pe.attentionMask(BLOCK_CONFIG, { queryLength, offset }); // Uint8Array [q, k], 1 = may attend
    // 0 where a key may be seen, else the mask: float16 bits of 0 and of -65504, or float32 values
    const bias = half ? new Uint16Array(allowed.length) : new Float32Array(allowed.length);
    const masked = half ? 0xfbff : -Infinity;
    for (let i = 0; i < allowed.length; i++) bias[i] = allowed[i] ? 0 : masked;
    return { cos, sin, bias, biasDims: [1, 1, queryLength, keyLength] }; // broadcast over the heads
  }
  if (positional === 'alibi') {
    // no rotation: cos 1 (float16 bits 0x3c00), sin 0
    const cos = half ? new Uint16Array(queryLength * MODEL.headDim).fill(0x3c00) : new Float32Array(queryLength * MODEL.headDim).fill(1);
    const sin = half ? new Uint16Array(queryLength * MODEL.headDim) : new Float32Array(queryLength * MODEL.headDim);
    // [heads, q, k]; masked keys -Infinity (float32) or FLOAT16_MASK (float16)
    const bias = pe.alibiBias(MODEL.heads, queryLength, keyLength, half ? { offset, dtype, maskValue: FLOAT16_MASK } : { offset });
    return { cos, sin, bias, biasDims: [1, MODEL.heads, queryLength, keyLength] }; // same data, a leading 1
  }
  throw new RangeError(`positional must be 'rope' or 'alibi', got ${positional}`);
}

/**
 * Data as an ort.Tensor of `dtype`: a Float32Array for 'float32' (no copy); for 'float16' posenc's
 * 16-bit data as it is (no copy), or a Float32Array of the caller's values rounded to float16 bits.
 */
export function tensorOf(ort, dtype, data, dims) {
  if (dtype === 'float32') return new ort.Tensor('float32', data, dims);
  if (!(data instanceof Float32Array)) return new ort.Tensor('float16', data, dims);
  return new ort.Tensor('float16', toFloat16Bits(data, { replaceNegativeInfinity: FLOAT16_MASK }), dims);
}

/** A float32 or float16 output tensor's values as a Float32Array. */
export function valuesOf(tensor) {
  if (tensor.type === 'float32') return tensor.data;
  if (tensor.type === 'float16') return fromFloat16(tensor.data);
  throw new TypeError(`expected a float tensor, got ${tensor.type}`);
}

/**
 * One run of the block. `past` is the previous run's { presentKey, presentValue } tensors (of this
 * session's dtype, passed back unchanged) or null.
 * @returns {Promise<{ y, presentKey, presentValue }>} ort.Tensors
 */
export async function runBlock(ort, session, dtype, { x, cos, sin, bias, biasDims }, past = null) {
  const q = x.length / MODEL.dModel;
  const empty = () => tensorOf(ort, dtype, new Float32Array(0), [1, MODEL.heads, 0, MODEL.headDim]);
  const out = await session.run({
    x: tensorOf(ort, dtype, x, [1, q, MODEL.dModel]),
    cos_cache: tensorOf(ort, dtype, cos, [q, MODEL.headDim]),
    sin_cache: tensorOf(ort, dtype, sin, [q, MODEL.headDim]),
    attn_bias: tensorOf(ort, dtype, bias, biasDims),
    past_key: past ? past.presentKey : empty(),
    past_value: past ? past.presentValue : empty(),
  });
  return { y: out.y, presentKey: out.present_key, presentValue: out.present_value };
}

/** The two sessions (wasm backend), from model bytes (Uint8Array) or URLs. */
export async function createSessions(ort, { float32, float16 }) {
  const options = { executionProviders: ['wasm'] };
  return {
    float32: await ort.InferenceSession.create(float32, options),
    float16: await ort.InferenceSession.create(float16, options),
  };
}

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new RangeError(`length ${a.length} != ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d; // NaN propagates
  }
  return m;
}

const fixtureBias = (c) => Float32Array.from(c.bias, (v) => (v === null ? -Infinity : v));

/**
 * Runs every case of decoder_block.json (parsed) in both sessions with posenc's inputs, decoding
 * steps fed with the same session's own present_key / present_value. Returns per case: posenc's
 * inputs against the ones PyTorch used, and both graphs' outputs (Float32Array values) beside
 * PyTorch's float32 outputs and the float16 bound of every value.
 */
export async function runCases(ort, pe, sessions, fixture) {
  const rotary = pe.rotary({ headDim: MODEL.headDim, base: MODEL.ropeBase });
  const presents = { float32: new Map(), float16: new Map() };
  const results = [];
  try {
    for (const c of fixture.cases) {
      const inputs = positionInputs(pe, rotary, c);
      const inputs16 = positionInputs(pe, rotary, c, 'float16');
      const x = Float32Array.from(c.x);
      const result = {
        name: c.name,
        inputs: {
          cos: maxAbsDiff(inputs.cos, c.cos),
          sin: maxAbsDiff(inputs.sin, c.sin),
          bias: sameBias(inputs.bias, fixtureBias(c)),
          biasDims: inputs.biasDims.join() === c.biasDims.join(),
        },
        expected: { y: c.expected.y, presentKey: c.expected.presentKey, presentValue: c.expected.presentValue },
        bound: c.float16Bound,
      };
      for (const dtype of ['float32', 'float16']) {
        const past = c.pastFrom ? presents[dtype].get(c.pastFrom) : null;
        const out = await runBlock(ort, sessions[dtype], dtype, { x, ...(dtype === 'float16' ? inputs16 : inputs) }, past);
        presents[dtype].set(c.name, out);
        result[dtype] = {
          type: out.y.type,
          dims: { y: out.y.dims, presentKey: out.presentKey.dims },
          y: valuesOf(out.y),
          presentKey: valuesOf(out.presentKey),
          presentValue: valuesOf(out.presentValue),
        };
      }
      results.push(result);
    }
  } finally {
    rotary.dispose();
  }
  return results;
}

/** Largest |a - b| over finite entries; Infinity if a -Infinity stands where the other has none. */
function sameBias(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === -Infinity || b[i] === -Infinity) {
      if (a[i] !== b[i]) return Infinity;
    } else m = Math.max(m, Math.abs(a[i] - b[i]));
  }
  return a.length === b.length ? m : Infinity;
}

/**
 * The margins of one case: float32's max |ORT - PyTorch| over y and the presents; float16's max
 * |ORT - PyTorch float32|, the largest bound, and the worst ratio |error| / (bound + 1e-5) (<= 1 passes).
 */
export function summarize(result, slack = 1e-5) {
  const out = { name: result.name, float32: 0, float16: 0, float16Bound: 0, float16Ratio: 0 };
  for (const k of ['y', 'presentKey', 'presentValue']) {
    out.float32 = Math.max(out.float32, maxAbsDiff(result.float32[k], result.expected[k]));
    const got = result.float16[k];
    const want = result.expected[k];
    const bound = result.bound[k];
    for (let i = 0; i < want.length; i++) {
      const e = Math.abs(got[i] - want[i]);
      out.float16 = Math.max(out.float16, Number.isNaN(e) ? Infinity : e);
      out.float16Bound = Math.max(out.float16Bound, bound[i]);
      out.float16Ratio = Math.max(out.float16Ratio, Number.isNaN(e) ? Infinity : e / (bound[i] + slack));
    }
  }
  return out;
}
