// What every consumer does with posenc once it has imported it its own way (ESM import, require,
// a bundler, an import map): compute, use an encoder, dispose it twice, touch the rotary and ALiBi
// families and see whether the transformer is there. tests/consumers/run.mjs copies this folder into
// each scratch project and checks the returned object.
export async function exercise({ init, simdSupported }, options) {
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
  return {
    simd: pe.simd,
    simdSupported: simdSupported(),
    table: Array.from(table),
    encoderRows: Array.from(rows),
    afterDispose,
    rotaryCos5,
    alibiSlopes: Array.from(pe.alibiSlopes(8)),
    transformer: typeof pe.encoderLayer === 'function' && typeof pe.loadModel === 'function',
  };
}
