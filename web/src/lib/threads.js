// Whether this page can run posenc with threads, and with how many (section 6 compares 1 thread
// with N; the header says which build runs). posenc's threaded build needs SharedArrayBuffer, which
// a browser gives only to a cross-origin isolated page (the COOP/COEP headers of web/isolation.js).

/** N of section 6's "1 thread against N": min(4, navigator.hardwareConcurrency), at least 2. */
export function comparedThreads() {
  const cores = Number(globalThis.navigator?.hardwareConcurrency) || 2;
  return Math.max(2, Math.min(4, cores));
}

/** True when posenc's init({ threads: N > 1 }) can run here (`simd`: wasm SIMD is supported; the
 * threaded build is a SIMD build). */
export function threadsAvailable(simd) {
  return simd && globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

/** Why threads are unavailable here (a sentence), or null when they are available. */
export function threadsUnavailableReason(simd) {
  if (threadsAvailable(simd)) return null;
  if (globalThis.crossOriginIsolated !== true) {
    return 'This page is not cross-origin isolated (it is served without the headers ' +
      'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp), so the ' +
      'browser gives it no SharedArrayBuffer and posenc runs on one thread.';
  }
  if (typeof SharedArrayBuffer !== 'function') return 'This browser has no SharedArrayBuffer, so posenc runs on one thread.';
  return 'This browser has no wasm SIMD, which posenc\'s threaded build needs, so posenc runs on one thread.';
}
