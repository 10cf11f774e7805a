// Browser (and bundler) entry of posenc/encoding: the encodings without the transformer, over the
// .wasm linked without them. Literal file names, as in browser.js, so bundlers emit the files.
import { createInit } from './api.js';
import { attachEncoderApi } from './encoder.js';

export { simdSupported } from './api.js';

const instantiate = async (glue, url) => (await glue).default({ locateFile: () => url.href });

/**
 * Loads posenc/encoding. `init({ simd: false })` forces the baseline build.
 * @type {(options?: { simd?: boolean }) => Promise<object>}
 */
export const init = createInit(
  (simd) =>
    simd
      ? instantiate(import('./posenc_encoding_simd.mjs'), new URL('./posenc_encoding_simd.wasm', import.meta.url))
      : instantiate(import('./posenc_encoding_baseline.mjs'), new URL('./posenc_encoding_baseline.wasm', import.meta.url)),
  [attachEncoderApi],
);
