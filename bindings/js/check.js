// Argument checks of every public function: each error names the function, the argument and
// what is allowed (`posenc.<fn>: <name> must be <expected>, got <value>`). Only checks JavaScript
// alone can make live here (types, detached buffers, the shape of option objects, numeric ranges
// whose bounds the caller passes in); the limits themselves come from the core (core.js).

// 'an Array', 'an Int32Array', 'an object'; but 'a Uint8Array'.
const article = (name) => (/^(?:[AEIO]|U(?!int))/.test(name) ? `an ${name}` : `a ${name}`);

/** A short description of a bad value for error messages. */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an Array';
  if (ArrayBuffer.isView(value)) return article(value.constructor.name);
  if (typeof value === 'object') {
    // An ArrayBuffer, a Map...: say which; plain objects are 'an object'.
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    return name && name !== 'Object' ? article(name) : 'an object';
  }
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 20))}`;
  if (typeof value === 'bigint') return `the BigInt ${value}n`;
  return String(value);
}

export function typeError(fn, name, expected, value) {
  return new TypeError(`posenc.${fn}: ${name} must be ${expected}, got ${describe(value)}`);
}

export function rangeError(fn, name, expected, value) {
  return new RangeError(`posenc.${fn}: ${name} must be ${expected}, got ${describe(value)}`);
}

/** Whether an ArrayBuffer (or SharedArrayBuffer) was detached (transferred). */
export function isDetachedBuffer(buffer) {
  if (typeof buffer.detached === 'boolean') return buffer.detached;
  if (buffer.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer); // throws on a detached buffer, not on an empty live one
    return false;
  } catch {
    return true;
  }
}

/** Whether a typed array's buffer was detached (then it reads as empty). */
export function isDetached(view) {
  return isDetachedBuffer(view.buffer);
}

function detachedError(fn, name) {
  return new TypeError(`posenc.${fn}: ${name} is backed by a detached ArrayBuffer`);
}

/**
 * A number: a TypeError for non-numbers, a RangeError for non-finite values, non-integers (with
 * `integer`) and values outside [min, max] or not above `above`.
 */
export function checkNumber(fn, name, value, { integer = false, min = -Infinity, max = Infinity, above } = {}) {
  if (typeof value !== 'number') {
    throw typeError(fn, name, integer ? 'an integer number' : 'a number', value);
  }
  if (
    !Number.isFinite(value) ||
    (integer && !Number.isInteger(value)) ||
    (above !== undefined && !(value > above)) ||
    value < min ||
    value > max
  ) {
    const bounds =
      above !== undefined
        ? ` greater than ${above}`
        : max === Infinity
          ? min === -Infinity
            ? ''
            : ` at least ${min}`
          : ` from ${min} to ${max}`;
    throw rangeError(fn, name, `${integer ? 'an integer' : 'a finite number'}${bounds}`, value);
  }
  return value;
}

/** A boolean, or `fallback` when undefined. */
export function checkBoolean(fn, name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw typeError(fn, name, 'a boolean', value);
  return value;
}

// The built-in accessors of every typed array, read once: a subclass or an own property cannot
// change what they return.
const TYPED_ARRAY_PROTOTYPE = Object.getPrototypeOf(Uint8Array.prototype);
const intrinsic = (key) => Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTOTYPE, key).get;
const viewBuffer = intrinsic('buffer');
const viewByteOffset = intrinsic('byteOffset');
const viewLength = intrinsic('length');

/**
 * A typed array of class Type (expected: how messages name it) whose buffer is not detached, as a
 * plain Type view of the same memory: the caller works on the returned view, whose length, set
 * and subarray are the built-in ones. A Type instance with none of those overridden is returned
 * as it is (the common case: no allocation); a subclass (a Node Buffer too) or an instance with
 * an own length, set, subarray or constructor gets a new view, so code of the caller's cannot run
 * inside a call or make it copy a different number of elements than it checked.
 */
export function checkTypedArray(fn, name, value, Type, expected) {
  if (!(value instanceof Type)) throw typeError(fn, name, expected, value);
  if (isDetachedBuffer(viewBuffer.call(value))) throw detachedError(fn, name);
  if (
    Object.getPrototypeOf(value) === Type.prototype &&
    !Object.hasOwn(value, 'length') &&
    !Object.hasOwn(value, 'set') &&
    !Object.hasOwn(value, 'subarray') &&
    !Object.hasOwn(value, 'constructor')
  ) {
    return value;
  }
  return new Type(viewBuffer.call(value), viewByteOffset.call(value), viewLength.call(value));
}

export function checkFloat32Array(fn, name, value) {
  return checkTypedArray(fn, name, value, Float32Array, 'a Float32Array');
}

/** One of the strings in `allowed`; returns its index. */
export function checkEnum(fn, name, value, allowed) {
  const expected = `one of '${allowed.join("', '")}'`;
  if (typeof value !== 'string') throw typeError(fn, name, expected, value);
  const index = allowed.indexOf(value);
  if (index < 0) throw rangeError(fn, name, expected, value);
  return index;
}

// Tensors: objects { data, dims } as ort.Tensor and transformers.js' Tensor are (duck-typed).
export const isTypedArray = (value) => ArrayBuffer.isView(value) && !(value instanceof DataView);

export function checkAttached(fn, name, view) {
  if (isDetached(view)) throw detachedError(fn, name);
}

/** Whether `value` is a tensor-like object: not an Array or typed array, with `data` and `dims`. */
export function isTensorLike(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value) &&
    'dims' in value && 'data' in value;
}

/**
 * A tensor-like's { data, dims }, checked: on the CPU (a `location` other than 'cpu' is a
 * TypeError, thrown before `data` is read: reading a GPU tensor's data downloads it or throws),
 * dims an Array of non-negative integers, data a typed array or an Array of dims' product entries.
 * Each property is read once.
 */
export function readTensor(fn, name, value) {
  const location = value.location;
  if (location !== undefined && location !== 'cpu') {
    throw new TypeError(
      `posenc.${fn}: ${name} must be a tensor on the CPU, got one at location ${describe(location)} ` +
        '(download it first, e.g. await tensor.getData())',
    );
  }
  const dims = value.dims;
  if (!Array.isArray(dims)) throw typeError(fn, `${name}.dims`, 'an Array of non-negative integers', dims);
  const shape = Array.from(dims);
  let size = 1;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    if (!Number.isSafeInteger(d) || d < 0) throw rangeError(fn, `${name}.dims[${i}]`, 'a non-negative integer', d);
    size *= d;
  }
  const data = value.data;
  if (!Array.isArray(data) && !isTypedArray(data)) throw typeError(fn, `${name}.data`, 'a typed array or an Array', data);
  if (isTypedArray(data)) checkAttached(fn, `${name}.data`, data);
  if (data.length !== size) {
    const what = `${size} entries (the product of dims [${shape}])`;
    throw new RangeError(`posenc.${fn}: ${name}.data must have ${what}, got ${data.length}`);
  }
  return { data, dims: shape };
}

/**
 * An Array, a typed array (BigInt64Array and BigUint64Array too: ONNX and transformers.js hold ids
 * and masks as int64) or a tensor { data, dims } of one sequence (dims [n] or [1, n]), not detached,
 * of `length` entries (one per `per`): positions, padding masks. Returns the list (a tensor's
 * data). `expected` is how the TypeError names what is allowed.
 */
export function checkNumberList(fn, name, value, length, { per = 'row', expected = 'an Array or typed array of numbers' } = {}) {
  if (isTensorLike(value)) {
    const { data, dims } = readTensor(fn, name, value);
    if (dims.filter((d) => d !== 1).length > 1) {
      throw new RangeError(`posenc.${fn}: ${name} must have dims [n] or [1, n] (one sequence), got [${dims}]`);
    }
    value = data;
  }
  if (!Array.isArray(value) && !isTypedArray(value)) throw typeError(fn, name, expected, value);
  if (ArrayBuffer.isView(value) && isDetached(value)) throw detachedError(fn, name);
  if (length !== undefined && value.length !== length) {
    throw new RangeError(`posenc.${fn}: ${name} must have ${length} entries (one per ${per}), got ${value.length}`);
  }
  return value;
}

/**
 * The first `length` entries of a checked list (checkNumberList) as a Float64Array, each read
 * once: an entry that is not a number throws a TypeError naming `name[i]`; with `range`
 * ({ min, max, expected }), a number outside [min, max] (NaN too) the RangeError "must be
 * <expected>".
 */
export function float64Entries(fn, name, list, length, range) {
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const v = list[i];
    // A BigInt is its Number (exact within the ranges checked here: every bound is below 2^53).
    const x = typeof v === 'bigint' ? Number(v) : v;
    if (typeof x !== 'number') throw typeError(fn, `${name}[${i}]`, 'a number', v);
    if (range && !(x >= range.min && x <= range.max)) throw rangeError(fn, `${name}[${i}]`, range.expected, v);
    out[i] = x;
  }
  return out;
}

/**
 * A 0/1 mask as bytes (1 = set): every entry 0, 1, false or true. `meaning` says what 1 means in
 * the RangeError ('1 = padding').
 */
export function checkFlags(fn, name, list, meaning) {
  const bytes = new Uint8Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (m !== 0 && m !== 1 && m !== true && m !== false && m !== 0n && m !== 1n) {
      throw rangeError(fn, `${name}[${i}]`, `0, 1, false or true (${meaning})`, m);
    }
    bytes[i] = m ? 1 : 0;
  }
  return bytes;
}

const EMPTY = Object.freeze({});

/**
 * An options object whose keys all belong to `allowed` (a Set), as a copy: each option is read
 * once, here, so a getter cannot give a checked value first and another one later. undefined
 * gives an empty object. Unknown (misspelt) names throw a TypeError rather than being ignored;
 * anything but a plain object (an Array, a Map, a typed array...) throws a TypeError. `name` is
 * the argument's name in messages: 'options', or e.g. 'config' (then an unknown key is "unknown
 * config field").
 */
export function checkOptionsObject(fn, options, allowed, name = 'options') {
  if (options === undefined) return EMPTY;
  const proto = options === null || typeof options !== 'object' ? undefined : Object.getPrototypeOf(options);
  if (proto !== Object.prototype && proto !== null) throw typeError(fn, name, 'an object', options);
  // A spread copy (V8 clones a plain object's shape fast), then for-in over its own keys: no
  // array allocated, this runs on every call, a decoding step's too.
  const copy = { ...options };
  for (const key in copy) {
    if (Object.hasOwn(copy, key) && !allowed.has(key)) {
      const what = name === 'options' ? 'option' : `${name} field`;
      throw new TypeError(`posenc.${fn}: unknown ${what} '${key}' (allowed: ${[...allowed].join(', ')})`);
    }
  }
  return copy;
}

/**
 * A model's config.json given as an object or as its JSON text, as an object: text that is not
 * JSON of an object is a RangeError, anything else but a plain object a TypeError saying
 * `expected` (posenc/relative and rotary2d; pe.rotary's configText also serializes).
 */
export function parseConfig(fn, config, expected) {
  let c = config;
  if (typeof c === 'string') {
    try {
      c = JSON.parse(c);
    } catch {
      c = null;
    }
    if (c === null || typeof c !== 'object' || Array.isArray(c)) {
      throw new RangeError(`posenc.${fn}: config must be JSON text of an object (a model's config.json)`);
    }
  } else if (c === null || typeof c !== 'object' || Array.isArray(c)) {
    throw typeError(fn, 'config', expected, c);
  }
  return c;
}
