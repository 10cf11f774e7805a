// Vite config of the demo page (web/). `posenc` (and `posenc/multimodal`, `posenc/relative`) is
// imported by its package name and resolved to the repo's built package (dist/, made by
// `npm run build`), exactly what `npm install posenc` would give a user: the browser entry finds
// its .wasm through `new URL(..., import.meta.url)`, so Vite emits both builds as assets.
// Everything is bundled: the built site works offline. Both servers send the cross-origin
// isolation headers (web/isolation.js), so section 6 can compare 1 thread with N; the threaded
// build is loaded by that comparison only, in the benchmark worker.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { CROSS_ORIGIN_ISOLATION_HEADERS } from './isolation.js';

const dist = fileURLToPath(new URL('../dist/browser.js', import.meta.url));
const multimodal = fileURLToPath(new URL('../dist/multimodal.js', import.meta.url));
const relative = fileURLToPath(new URL('../dist/relative.js', import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  resolve: {
    alias: [
      { find: /^posenc$/, replacement: dist },
      // posenc/multimodal (ropeIndex, section 12; rotary2d, section 14): the ./multimodal export, plain JS
      { find: /^posenc\/multimodal$/, replacement: multimodal },
      // posenc/relative (relativeBuckets, relativeBias, section 13): the ./relative export, plain JS
      { find: /^posenc\/relative$/, replacement: relative },
    ],
  },
  // The benchmark worker imports posenc, whose init() loads the glue with a dynamic import:
  // that needs ES module workers (supported by every current browser).
  worker: { format: 'es' },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0, reportCompressedSize: true },
  preview: { host: '127.0.0.1', port: 5173, headers: { ...CROSS_ORIGIN_ISOLATION_HEADERS } },
  server: { host: '127.0.0.1', fs: { allow: ['..'] }, headers: { ...CROSS_ORIGIN_ISOLATION_HEADERS } },
});
