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

const EMPTY = Object.freeze({});

/**
 * An options object whose keys all belong to `allowed` (a Set); undefined gives an empty object.
 * Unknown (misspelt) names throw a TypeError rather than being ignored.
 */
export function checkOptionsObject(fn, options, allowed) {
  if (options === undefined) return EMPTY;
  if (options === null || typeof options !== 'object' || Array.isArray(options) || ArrayBuffer.isView(options)) {
    throw typeError(fn, 'options', 'an object', options);
  }
  for (const key of Object.keys(options)) {
    if (!allowed.has(key)) {
      throw new TypeError(`posenc.${fn}: unknown option '${key}' (allowed: ${[...allowed].join(', ')})`);
    }
  }
  return options;
}
