// Node entry of the posenc package: every family of encodings (the paper's, rotary, ALiBi, 2D) and
// the transformer. Reads the chosen .wasm with fs and hands its bytes to the Emscripten glue (built
// for web/worker, which runs unchanged in Node given wasmBinary).
import { readFile } from 'node:fs/promises';
import * as os from 'node:os';
import { createInit } from './api.js';
import { attachAlibiApi } from './alibi.js';
import { attachEncoderApi } from './encoder.js';
import { attachLayerApi } from './layer.js';
import { attachModelApi } from './model.js';
import { attachRotaryApi } from './rotary.js';
import { attachSincos2dApi } from './sincos2d.js';

export { simdSupported } from './api.js';

const instantiate = async (glue, url) => (await glue).default({ wasmBinary: await readFile(url) });
/**
 * Loads posenc. `init({ simd: false })` forces the baseline build, `init({ threads })`
 * runs the threaded build (threads: 'auto': min(4, cores)).
 * @type {(options?: { simd?: boolean, threads?: number | 'auto' }) => Promise<object>}
 */
export const init = createInit(
  (simd, threads) =>
    threads > 1
      ? // posenc_node_threads.mjs: worker_threads for the pool (loaded only here)
        import('./posenc_node_threads.mjs').then((m) =>
          m.instantiate(import('./posenc_threads.mjs'), new URL('./posenc_threads.wasm', import.meta.url), threads),
        )
      : simd
      ? instantiate(import('./posenc_simd.mjs'), new URL('./posenc_simd.wasm', import.meta.url))
      : instantiate(import('./posenc_baseline.mjs'), new URL('./posenc_baseline.wasm', import.meta.url)),
  [attachEncoderApi, attachRotaryApi, attachAlibiApi, attachSincos2dApi, attachLayerApi, attachModelApi],
  // threads: 'auto': the cores Node reports (availableParallelism from Node 18.14, else the CPU count).
  () => os.availableParallelism?.() ?? os.cpus().length,
);
