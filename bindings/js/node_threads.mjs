// Node side of the threaded build. Emscripten's pool workers are Web Workers; Node has
// worker_threads. NodeWorker gives the glue the Web Worker interface over a worker_thread, which
// starts this same file: there (workerData.posencWorker) it gives Emscripten's worker script
// (<module>.worker.js: classic-script code that is also a valid ES module) the globals it expects
// of a Web Worker, self, postMessage and onmessage, and imports it. Loaded only by init({ threads })
// with threads > 1 (shipped beside the glue, not bundled into the entry).
import { readFile } from 'node:fs/promises';
import { Worker, parentPort, workerData } from 'node:worker_threads';

export class NodeWorker {
  constructor(url) {
    // execArgv: [] - the worker runs posenc's own modules, not the process's flags (--input-type
    // would stop it).
    const worker = new Worker(new URL(import.meta.url), { workerData: { posencWorker: String(url) }, execArgv: [] });
    let loaded = false;
    let failed = false;
    this.errorListeners = [];
    worker.on('message', (data) => {
      // A pool worker waits for work for the life of the instance: once loaded it must not keep
      // the process alive (init() is waiting for its 'loaded' until then).
      if (data?.cmd === 'loaded') {
        loaded = true;
        worker.unref();
      }
      this.onmessage?.({ data });
    });
    // 'error' as a Web Worker's ErrorEvent to the listeners (the glue's pool watch,
    // cmake/threads_pre.js, which rejects init()), then to Emscripten's onerror. A worker that
    // exits before it loaded without an error (process.exit in a module it imports) is an error too.
    const fail = (error) => {
      failed = true;
      const event = { type: 'error', message: error?.message ?? String(error), filename: String(url), error, preventDefault() {} };
      for (const listener of this.errorListeners) listener(event);
      this.onerror?.(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!loaded && !failed && !this.terminated) fail(new Error(`the worker exited with code ${code} before it loaded`));
    });
    this.worker = worker;
  }

  addEventListener(type, listener) {
    if (type === 'error') this.errorListeners.push(listener);
  }

  postMessage(message, transfer) {
    this.worker.postMessage(message, transfer);
  }

  terminate() {
    this.terminated = true;
    this.worker.terminate();
  }
}

/**
 * The threaded build's module (the entry passes its glue import and .wasm URL): threads - 1 pool
 * workers, started while the glue's factory runs, which makes them with the global Worker. Node has
 * none: for that synchronous call only, Worker is NodeWorker.
 */
export async function instantiate(gluePromise, wasmUrl, threads) {
  const [glue, wasmBinary] = await Promise.all([gluePromise, readFile(wasmUrl)]);
  const own = !globalThis.Worker;
  if (own) globalThis.Worker = NodeWorker;
  try {
    return glue.default({ wasmBinary, posencPool: threads - 1 });
  } finally {
    if (own) delete globalThis.Worker;
  }
}

if (workerData?.posencWorker) {
  globalThis.self = globalThis;
  globalThis.postMessage = (message) => parentPort.postMessage(message);
  await import(workerData.posencWorker);
  // Messages posted before the script set onmessage wait in the port until this listener starts it.
  parentPort.on('message', (data) => globalThis.onmessage({ data }));
}
