// A CommonJS user of posenc. posenc is an ES module without top-level await, so Node >= 20.19
// (and >= 22.12) can require() it. Prints one JSON line that tests/consumers/run.mjs checks.
const { init, simdSupported } = require('posenc');

async function run(options) {
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
  return {
    simd: pe.simd,
    simdSupported: simdSupported(),
    table: Array.from(table),
    encoderRows: Array.from(rows),
    afterDispose,
  };
}

(async () => {
  const result = {
    resolved: require.resolve('posenc'),
    default: await run(),
    baseline: await run({ simd: false }),
  };
  console.log(JSON.stringify(result));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
