// A Node ES module user of posenc: `import` by package name, default build and forced baseline,
// and posenc/encoding (the encodings without the transformer) through the exports map.
// Prints one JSON line that tests/consumers/run.mjs checks against the fixtures.
import * as posenc from 'posenc';
import { exercise } from './shared/exercise.mjs';

console.log(
  JSON.stringify({
    resolved: import.meta.resolve('posenc'),
    default: await exercise(posenc),
    baseline: await exercise(posenc, { simd: false }),
    encodingResolved: import.meta.resolve('posenc/encoding'),
    encoding: await exercise(await import('posenc/encoding')),
  }),
);
