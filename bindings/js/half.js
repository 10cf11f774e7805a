// dtype 'float16' / 'bfloat16' outputs, shared by the families: each value the float16 (bf16)
// nearest to the exact value, rounded once. The core converts its float32 rows in wasm and
// decides the rare values that are 16-bit rounding midpoints from the exact value
// (posenc/half.hpp); this module checks the option and makes the output array.

import { checkEnum, checkTypedArray, typeError } from './check.js';
import { FLOAT_DTYPES as DTYPES, float16View } from './float16.js';

/** Whether v is a Float16Array (where the engine has the type). */
const isFloat16Array = (v) => typeof globalThis.Float16Array === 'function' && v instanceof globalThis.Float16Array;

/** The dtype option: 0 float32 (the default), 1 float16, 2 bfloat16. */
export const checkDtype = (fn, dtype) => (dtype === undefined ? 0 : checkEnum(fn, 'dtype', dtype, DTYPES));

/**
 * The output of a 16-bit call of `needed` values: { bits (a Uint16Array to write the bits to),
 * result (what the call returns) }. `given`: the caller's out (a Uint16Array, or a Float16Array
 * for float16), at least `needed` long; a longer one gives its first `needed` values. `name`: the
 * argument's name in errors.
 */
export function halfOut(fn, dtype, given, needed, name = 'out') {
  if (given === undefined) {
    const bits = new Uint16Array(needed);
    return { bits, result: dtype === 1 ? float16View(bits) : bits };
  }
  const f16 = dtype === 1 && isFloat16Array(given);
  const out = f16 ? given : checkTypedArray(fn, name, given, Uint16Array, `a Uint16Array${dtype === 1 ? ' or Float16Array' : ''} (dtype '${DTYPES[dtype]}')`);
  if (out.length < needed) throw new RangeError(`posenc.${fn}: ${name} must hold at least ${needed} values, got ${out.length}`);
  return { bits: f16 ? new Uint16Array(out.buffer, out.byteOffset, out.length) : out, result: out.length === needed ? out : out.subarray(0, needed) };
}

/**
 * The dtype of rot.apply's data `value` (argument `name`): 0 for float32 (a Float32Array, dtype
 * absent or 'float32'), 1 float16 (a Float16Array, or a Uint16Array with dtype 'float16'), 2
 * bfloat16 (a Uint16Array with dtype 'bfloat16'); a Uint16Array without dtype is a TypeError.
 */
export function halfInput(fn, name, value, dtypeOption) {
  const isF16 = isFloat16Array(value);
  if (dtypeOption === undefined) {
    if (isF16) return 1;
    if (value instanceof Uint16Array) throw new TypeError(`posenc.${fn}: ${name} is a Uint16Array: give dtype 'float16' or 'bfloat16' (the format of its bits)`);
    return 0;
  }
  const dtype = checkDtype(fn, dtypeOption);
  if (dtype === 0) return 0;
  if (isF16 && dtype !== 1) throw typeError(fn, name, `a Uint16Array (dtype '${DTYPES[dtype]}')`, value);
  return dtype;
}

/** 16-bit data checked (checkTypedArray: not detached, no own overrides), as the Uint16Array of its bits. */
export function halfBits(fn, name, value, dtype) {
  if (isFloat16Array(value)) {
    const v = checkTypedArray(fn, name, value, globalThis.Float16Array, 'a Float16Array');
    return new Uint16Array(v.buffer, v.byteOffset, v.length);
  }
  return checkTypedArray(fn, name, value, Uint16Array, `a Uint16Array${dtype === 1 ? ' or Float16Array' : ''} (dtype '${DTYPES[dtype]}')`);
}
