// Node entry of the posenc package: reads the chosen .wasm with fs and hands its bytes to the
// Emscripten glue (built for web/worker, which runs unchanged in Node given wasmBinary).
import { readFile } from 'node:fs/promises';
import { chooseBuild, createApi } from './api.js';

export { simdSupported } from './api.js';

/**
 * Loads posenc. `init({ simd: false })` forces the baseline build.
 * @param {{ simd?: boolean }} [options]
 */
export async function init(options) {
  const simd = chooseBuild(options);
  const [glue, wasmBinary] = simd
    ? await Promise.all([import('./posenc_simd.mjs'), readFile(new URL('./posenc_simd.wasm', import.meta.url))])
    : await Promise.all([
        import('./posenc_baseline.mjs'),
        readFile(new URL('./posenc_baseline.wasm', import.meta.url)),
      ]);
  const Module = await glue.default({ wasmBinary });
  return createApi(Module, { simd });
}
