// Argument checks shared by the encoding API (api.js) and the layer API (layer.js): every error
// names the function, the argument and what is allowed.

const article = (name) => (/^[AEIOU]/.test(name) ? `an ${name}` : `a ${name}`);

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

const EMPTY = Object.freeze({});

/**
 * An options object whose keys all belong to `allowed` (a Set); undefined gives an empty object.
 * Unknown (misspelt) names throw a TypeError rather than being ignored. `name` is the argument's
 * name in messages: 'options', or e.g. 'config' (then an unknown key is "unknown config field").
 */
export function checkOptionsObject(fn, options, allowed, name = 'options') {
  if (options === undefined) return EMPTY;
  if (options === null || typeof options !== 'object' || Array.isArray(options) || ArrayBuffer.isView(options)) {
    throw typeError(fn, name, 'an object', options);
  }
  const what = name === 'options' ? 'option' : `${name} field`;
  for (const key of Object.keys(options)) {
    if (!allowed.has(key)) {
      throw new TypeError(`posenc.${fn}: unknown ${what} '${key}' (allowed: ${[...allowed].join(', ')})`);
    }
  }
  return options;
}
