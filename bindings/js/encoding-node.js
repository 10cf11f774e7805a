// Node entry of posenc/encoding: the encodings without the transformer (no encoderLayer or
// loadModel), over the .wasm linked without them (README.md, "Bundlers").
import { readFile } from 'node:fs/promises';
import { createInit } from './api.js';
import { attachEncoderApi } from './encoder.js';

export { simdSupported } from './api.js';

const instantiate = async (glue, url) => (await glue).default({ wasmBinary: await readFile(url) });

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
