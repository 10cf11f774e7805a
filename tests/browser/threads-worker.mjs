// A module Web Worker of tests/browser/threads.test.mjs: init({ threads }) from inside a worker
// (the pool's workers are then nested workers), computes and posts the digests back.
import { init } from '../../dist/browser.js';
import { computeMain, digest } from './threads-work.mjs';

self.onmessage = async ({ data }) => {
  try {
    const pe = await init(data.options);
    const results = await digest(computeMain(pe));
    const threads = pe.threads;
    pe.dispose();
    self.postMessage({ crossOriginIsolated: self.crossOriginIsolated, threads, results });
  } catch (err) {
    self.postMessage({ crossOriginIsolated: self.crossOriginIsolated, error: { name: err?.name, message: err?.message, stack: String(err?.stack) } });
  }
};
