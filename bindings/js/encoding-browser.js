// Browser (and bundler) entry of posenc/encoding: the encodings without the transformer, over the
// .wasm linked without them. Literal file names, as in browser.js, so bundlers emit the files.
import { browserCores, createInit } from './api.js';
import { attachAlibiApi } from './alibi.js';
import { attachEncoderApi } from './encoder.js';
import { attachRotaryApi } from './rotary.js';
import { attachSincos2dApi } from './sincos2d.js';

export { simdSupported } from './api.js';

const instantiate = async (glue, url) => (await glue).default({ locateFile: () => url.href });

/**
 * Loads posenc/encoding. `init({ simd: false })` forces the baseline build, `init({ threads })`
 * runs the threaded build (threads: 'auto': min(4, cores)).
 * @type {(options?: { simd?: boolean, threads?: number | 'auto' }) => Promise<object>}
 */
export const init = createInit(
  (simd, threads) =>
    threads > 1
      ? // The threaded build finds its .wasm and worker script itself, by the literal
        // new URL('./x', import.meta.url) forms bundlers follow (a locateFile would have to tell them apart).
        import('./posenc_encoding_threads.mjs').then((glue) => glue.default({ posencPool: threads - 1 }))
      : simd
      ? instantiate(import('./posenc_encoding_simd.mjs'), new URL('./posenc_encoding_simd.wasm', import.meta.url))
      : instantiate(import('./posenc_encoding_baseline.mjs'), new URL('./posenc_encoding_baseline.wasm', import.meta.url)),
  [attachEncoderApi, attachRotaryApi, attachAlibiApi, attachSincos2dApi],
  browserCores,
);
