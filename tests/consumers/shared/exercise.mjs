// What every consumer does with posenc once it has imported it its own way (ESM import, require,
// a bundler, an import map): compute, use an encoder, dispose it twice, touch the rotary and ALiBi
// families and see whether the transformer is there. tests/consumers/run.mjs copies this folder into
// each scratch project and checks the returned object. With { big: true } (the browser pages) it
// also reports pe.threads and the SHA-256 of tables big enough to be split between threads, and
// disposes the instance (which ends a threaded build's workers).
export async function exercise({ init, simdSupported }, options, { big = false } = {}) {
  const pe = await init(options);
  const table = pe.encode(100, 50);
  const enc = pe.encoder({ dim: 50 });
  const rows = enc.encode(3, { offset: 5 });
  enc.dispose();
  let afterDispose = null;
  try {
    enc.encode(1);
  } catch (err) {
    afterDispose = err.message;
  }
  enc.dispose(); // twice is harmless
  const rot = pe.rotary({ headDim: 4 });
  const rotaryCos5 = rot.cosSin(1, { offset: 5 }).cos[0]; // inv_freq[0] = 1: cos(5)
  rot.dispose();
  const result = {
    simd: pe.simd,
    simdSupported: simdSupported(),
    table: Array.from(table),
    encoderRows: Array.from(rows),
    afterDispose,
    rotaryCos5,
    alibiSlopes: Array.from(pe.alibiSlopes(8)),
    transformer: typeof pe.encoderLayer === 'function' && typeof pe.loadModel === 'function',
  };
  if (big) {
    result.threads = pe.threads;
    result.big = await bigDigests(pe);
    pe.dispose();
  }
  return result;
}

/**
 * SHA-256 (hex, crypto.subtle: the same in Node and pages) of the bytes of encode(20000, 512) and
 * of a scaled addTo over 9000 x 512 pseudo-random values: with threads, both are split between
 * them; run.mjs compares them with Node's single-thread results.
 */
export async function bigDigests(pe) {
  const d = 512;
  const x = new Float32Array(9000 * d);
  let s = 1;
  for (let i = 0; i < x.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    x[i] = s / 2 ** 31 - 1;
  }
  const out = {};
  for (const [name, value] of [['encode', pe.encode(20000, d)], ['addTo', pe.addTo(x, d, { scale: Math.sqrt(d) })]]) {
    const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', value));
    out[name] = Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('');
  }
  return out;
}
