// Tensors and integer ids as posenc's functions take and give them. Input: an Array of numbers (or
// of rows), a typed array, or a tensor-like object { data, dims } as ort.Tensor and transformers.js'
// Tensor are (duck-typed, no dependency). Output: Int32Array by default, BigInt64Array with
// dtype 'int64', or { data, dims, type } with as: 'tensor' (`new ort.Tensor(type, data, dims)`
// takes it without a copy).

import { checkAttached, checkEnum, isTensorLike, isTypedArray, rangeError, readTensor, typeError } from './check.js';

export { isTensorLike, readTensor };

export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;

/**
 * The entries of `value` as { values, dims }: an Array of numbers or BigInts (dims [n]), an Array
 * of such rows of one length (dims [rows, n]; rows as Arrays or typed arrays), a typed array
 * (dims [n]) or a tensor-like (its dims). Every entry must be an integer in [min, max]: a non-number
 * is a TypeError, a fraction or an out-of-range value (a BigInt too, compared as a BigInt: never
 * wrapped) a RangeError naming `name[i]` (i: the flat index). values is an Int32Array when [min, max]
 * lies in the int32 range, else a Float64Array. `dims` (optional): the dims required, -1 for any size.
 */
export function readIntegers(fn, name, value, { min = INT32_MIN, max = INT32_MAX, dims: want } = {}) {
  let data;
  let dims;
  if (isTensorLike(value)) {
    ({ data, dims } = readTensor(fn, name, value));
  } else if (isTypedArray(value)) {
    checkAttached(fn, name, value);
    data = value;
    dims = [value.length];
  } else if (Array.isArray(value)) {
    const rows = value.length > 0 && (Array.isArray(value[0]) || isTypedArray(value[0]));
    data = rows ? flattenRows(fn, name, value) : value;
    dims = rows ? [value.length, value[0].length] : [value.length];
  } else {
    throw typeError(fn, name, 'an Array, a typed array or a tensor { data, dims } of integers', value);
  }
  if (want && (want.length !== dims.length || want.some((d, i) => d !== -1 && d !== dims[i]))) {
    const shape = want.map((d) => (d === -1 ? 'n' : d));
    throw new RangeError(`posenc.${fn}: ${name} must have dims [${shape}], got [${dims}]`);
  }
  const int32 = min >= INT32_MIN && max <= INT32_MAX;
  const values = int32 ? new Int32Array(data.length) : new Float64Array(data.length);
  const expected = `an integer from ${min} to ${max}`;
  const bigMin = BigInt(min);
  const bigMax = BigInt(max);
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (typeof v === 'number') {
      if (!Number.isInteger(v) || v < min || v > max) throw rangeError(fn, `${name}[${i}]`, expected, v);
      values[i] = v;
    } else if (typeof v === 'bigint') {
      if (v < bigMin || v > bigMax) throw rangeError(fn, `${name}[${i}]`, expected, v);
      values[i] = Number(v);
    } else {
      throw typeError(fn, `${name}[${i}]`, 'an integer number', v);
    }
  }
  return { values, dims };
}

// The rows of an Array of rows as one flat Array (each row an Array or typed array, one length).
function flattenRows(fn, name, rows) {
  const n = rows[0].length;
  const flat = [];
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    if (!Array.isArray(row) && !isTypedArray(row)) throw typeError(fn, `${name}[${r}]`, 'an Array or a typed array (a row)', row);
    if (isTypedArray(row)) checkAttached(fn, `${name}[${r}]`, row);
    if (row.length !== n) {
      throw new RangeError(`posenc.${fn}: ${name}[${r}] must have ${n} entries (as ${name}[0]), got ${row.length}`);
    }
    for (let i = 0; i < n; i++) flat.push(row[i]);
  }
  return flat;
}

export const INTEGER_DTYPES = ['int32', 'int64'];
export const OUTPUT_FORMS = ['array', 'tensor'];

/** The output options { dtype, as } checked: { dtype: 'int32' | 'int64', tensor: boolean }. */
export function readOutputOptions(fn, { dtype, as } = {}) {
  return {
    dtype: dtype === undefined ? 'int32' : INTEGER_DTYPES[checkEnum(fn, 'dtype', dtype, INTEGER_DTYPES)],
    tensor: as === undefined ? false : checkEnum(fn, 'as', as, OUTPUT_FORMS) === 1,
  };
}

/**
 * Integer results (an Int32Array, a Float64Array or an Array of integers) in the asked dtype:
 * Int32Array ('int32'; a value outside the int32 range is a RangeError naming `name` and
 * suggesting 'int64') or BigInt64Array ('int64'); with `tensor`, as { data, dims, type }.
 */
export function integerOutput(fn, name, values, dims, { dtype = 'int32', tensor = false } = {}) {
  let data;
  if (dtype === 'int64') {
    data = new BigInt64Array(values.length);
    for (let i = 0; i < values.length; i++) data[i] = BigInt(values[i]);
  } else if (values instanceof Int32Array) {
    data = values;
  } else {
    data = new Int32Array(values.length);
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v < INT32_MIN || v > INT32_MAX) {
        throw new RangeError(`posenc.${fn}: ${name} has ${v}, outside the int32 range; pass dtype: 'int64'`);
      }
      data[i] = v;
    }
  }
  return tensor ? { data, dims: [...dims], type: dtype } : data;
}
