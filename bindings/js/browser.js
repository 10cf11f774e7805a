// Browser (and bundler) entry of the posenc package. The literal `new URL('./x.wasm',
// import.meta.url)` lets Vite, webpack and plain import maps find and emit the file; only the
// build that init() chooses is fetched.
import { chooseBuild, createApi } from './api.js';

export { simdSupported } from './api.js';

/**
 * Loads posenc. `init({ simd: false })` forces the baseline build.
 * @param {{ simd?: boolean }} [options]
 */
export async function init(options) {
  const simd = chooseBuild(options);
  const glue = simd ? await import('./posenc_simd.mjs') : await import('./posenc_baseline.mjs');
  const url = simd
    ? new URL('./posenc_simd.wasm', import.meta.url)
    : new URL('./posenc_baseline.wasm', import.meta.url);
  const Module = await glue.default({ locateFile: () => url.href });
  return createApi(Module, { simd });
}
