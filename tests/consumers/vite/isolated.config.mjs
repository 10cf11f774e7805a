// What an app that wants init({ threads }) adds to its Vite config: the headers that make its pages
// cross-origin isolated (SharedArrayBuffer), in the dev server and in `vite preview`. Nothing else:
// the package's worker script and glue need no plugin. tests/consumers/run.mjs runs the dev server
// with `--config isolated.config.mjs` for its ?threads=2 check (the other checks use no config).
const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export default { server: { headers }, preview: { headers } };
