// A module Web Worker of tests/browser/instances.test.mjs: loads posenc through the package's
// browser entry, runs compute() and posts the results (as bit patterns) back.
import { init } from '../../dist/browser.js';
import { compute, toBits } from './instances-work.mjs';

self.onmessage = async ({ data }) => {
  const started = performance.now();
  try {
    const pe = await init(data.options);
    const initialized = performance.now();
    const bytes = new Uint8Array(await (await fetch(data.modelUrl)).arrayBuffer());
    const results = toBits(compute(pe, bytes, data.tokens));
    self.postMessage({ id: data.id, simd: pe.simd, results, started, initialized, origin: performance.timeOrigin });
  } catch (err) {
    self.postMessage({ id: data.id, error: String(err?.stack ?? err) });
  }
};
