// A CommonJS user of posenc. posenc is an ES module without top-level await, so Node >= 20.19
// (and >= 22.12) can require() it. Prints one JSON line that tests/consumers/run.mjs checks.
const posenc = require('posenc');

(async () => {
  const { exercise } = await import('./shared/exercise.mjs');
  const result = {
    resolved: require.resolve('posenc'),
    default: await exercise(posenc),
    baseline: await exercise(posenc, { simd: false }),
  };
  console.log(JSON.stringify(result));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
