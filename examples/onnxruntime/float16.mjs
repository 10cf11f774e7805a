// float32 <-> float16 for onnxruntime-web's 'float16' tensors, which take the IEEE binary16 bit
// patterns in a Uint16Array (or a Float16Array where the engine has one: onnxruntime-web then
// returns Float16Array outputs, and still accepts Uint16Array inputs, viewing them as float16).
// posenc computes float32; these helpers round its values to float16 (a second rounding of the
// float32 value, not of the exact one). Plain JavaScript, no Node or DOM imports.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * The float16 bits nearest to the number `value` first rounded to float32 (round to nearest, ties to
 * even): subnormals, overflow to infinity (from 65520 up: 65504 + half an ulp), signed zeros and
 * infinities kept, NaN quiet with its sign and top payload bits.
 * @param {number} value
 * @returns {number} 0 .. 0xffff
 */
export function float16Bits(value) {
  f32[0] = value;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff; // biased by 127
  const mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 | (mantissa >>> 13) : 0);
  const e = exponent - 112; // the float16 biased exponent (bias 15) of a normal result
  if (e >= 0x1f) return sign | 0x7c00; // 2^16 and above
  if (e <= 0) {
    // float16 subnormal (or zero): the value in units of 2^-24 is m24 * 2^(exponent - 126), m24 the
    // 24-bit significand with its implicit bit, so shift right by 14 - e (14 .. 24 here).
    if (e < -10) return sign; // below 2^-25: rounds to zero (exactly 2^-25 is handled below: a tie to 0)
    const significand = mantissa | 0x800000;
    const shift = 14 - e;
    let half = significand >>> shift;
    const rest = significand & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && half & 1)) half++; // a carry into 0x400 is the smallest normal
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++; // a carry into the exponent is right, up to 0x7c00 = inf
  return sign | half;
}

/**
 * The number a float16 bit pattern stands for (exact).
 * @param {number} bits 0 .. 0xffff
 */
export function float16Value(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? NaN : sign * Infinity;
  return sign * (1024 + mantissa) * 2 ** (exponent - 25);
}

/**
 * A float32 array rounded to float16, as the bits onnxruntime-web takes for a 'float16' tensor.
 * @param {ArrayLike<number>} values
 * @param {{ replaceNegativeInfinity?: number }} [options] e.g. -65504: what -Infinity becomes
 * @returns {Uint16Array}
 */
export function toFloat16Bits(values, { replaceNegativeInfinity } = {}) {
  const out = new Uint16Array(values.length);
  const replace = replaceNegativeInfinity === undefined ? null : float16Bits(replaceNegativeInfinity);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out[i] = replace !== null && v === -Infinity ? replace : float16Bits(v);
  }
  return out;
}

/**
 * A float16 tensor's data as float32 numbers: Uint16Array bits (engines without Float16Array) or a
 * Float16Array (its numbers are read as they are).
 * @param {Uint16Array | ArrayLike<number>} data
 * @returns {Float32Array}
 */
export function fromFloat16(data) {
  const out = new Float32Array(data.length);
  if (data instanceof Uint16Array) for (let i = 0; i < data.length; i++) out[i] = float16Value(data[i]);
  else out.set(data);
  return out;
}
