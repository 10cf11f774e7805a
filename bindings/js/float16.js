// 16-bit floats as ONNX Runtime and WebGPU take them: float16 (IEEE binary16) and bfloat16, as
// bits in a Uint16Array (or a Float16Array where the engine has one). Each value is rounded once,
// to nearest with ties to even, from the number given.

// (pure: bundles that do not use bfloat16Bits drop them)
const f32 = /* @__PURE__ */ new Float32Array(1);
const u32 = /* @__PURE__ */ new Uint32Array(f32.buffer);

/** v rounded to an integer, ties to even (v >= 0, exact arithmetic: v - floor(v) is exact). */
function roundHalfEven(v) {
  const f = Math.floor(v);
  const d = v - f;
  return d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f;
}

/** The float16 bits nearest to the number x (ties to even; NaN 0x7e00, beyond 65520 infinity). */
export function float16Bits(x) {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  // 65504 is the largest float16; 65520 is halfway to 65536, and ties go to the even infinity.
  if (a >= 65520) return sign | 0x7c00;
  // Subnormals (and 0) are whole multiples of 2^-24; 1024 of them is the smallest normal's bits.
  if (a < 2 ** -14) return sign | roundHalfEven(a * 2 ** 24);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  else if (2 ** (e + 1) <= a) e += 1;
  // 11 significant bits: m in [1024, 2048]; m = 2048 carries into the exponent field.
  const m = roundHalfEven(a * 2 ** (10 - e));
  return sign | (((e + 15) << 10) + (m - 1024));
}

/** The bfloat16 bits nearest to the float32 value x (ties to even; NaN stays a quiet NaN). */
export function bfloat16Bits(x) {
  f32[0] = x;
  const b = u32[0];
  if ((b & 0x7fffffff) > 0x7f800000) return ((b >>> 16) & 0x8000) | 0x7fc0;
  return (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
}

/** A Float16Array over these bits where the engine has the type, else the Uint16Array itself. */
export function float16View(bits) {
  const F16 = globalThis.Float16Array;
  return typeof F16 === 'function' ? new F16(bits.buffer, bits.byteOffset, bits.length) : bits;
}

/** The float dtypes of posenc/relative's outputs. */
export const FLOAT_DTYPES = ['float32', 'float16', 'bfloat16'];
