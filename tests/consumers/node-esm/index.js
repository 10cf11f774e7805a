// A Node ES module user of posenc: `import` by package name, default build and forced baseline.
// Prints one JSON line that tests/consumers/run.mjs checks against the fixtures.
import * as posenc from 'posenc';
import { exercise } from './shared/exercise.mjs';

console.log(
  JSON.stringify({
    resolved: import.meta.resolve('posenc'),
    default: await exercise(posenc),
    baseline: await exercise(posenc, { simd: false }),
  }),
);
