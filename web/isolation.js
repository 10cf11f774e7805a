// The HTTP headers that make the demo page cross-origin isolated (`crossOriginIsolated === true`):
// SharedArrayBuffer exists there, so section 6 can run posenc with threads (docs/API.md,
// "Threads"). Vite's dev and preview servers send them (web/vite.config.js), and so does the server
// of the demo's end-to-end tests (tests/e2e/page.mjs serveDemo). Everything the page loads is
// bundled and same-origin (no CDN, no font or image from elsewhere), so require-corp blocks nothing.
// Without them the page still works, on one thread (section 6 says why).
export const CROSS_ORIGIN_ISOLATION_HEADERS = Object.freeze({
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
});
