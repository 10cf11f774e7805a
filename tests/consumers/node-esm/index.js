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
    multimodal: await (async () => {
      const { ropeIndex } = await import('posenc/multimodal');
      const config = { model_type: 'qwen2_vl', image_token_id: 151655, video_token_id: 151656, vision_config: { spatial_merge_size: 2 } };
      const inputIds = [151652, ...new Array(6).fill(151655), 151653, 785, 13];
      const { positions, ropeDelta } = ropeIndex(config, { inputIds, imageGridThw: [[1, 4, 6]] });
      return { t: Array.from(positions.subarray(0, 10)).join(), ropeDelta };
    })(),
  }),
);
