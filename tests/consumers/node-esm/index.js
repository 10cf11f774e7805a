// A Node ES module user of posenc: `import` by package name, default build and forced baseline.
// Prints one JSON line that tests/consumers/run.mjs checks against the fixtures.
import { init, simdSupported } from 'posenc';

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

console.log(
  JSON.stringify({
    resolved: import.meta.resolve('posenc'),
    default: await run(),
    baseline: await run({ simd: false }),
  }),
);
