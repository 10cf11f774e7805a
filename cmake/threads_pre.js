// Prepended to the threaded modules' glue (cmake/wasm_module.cmake), inside the module's factory.
// The pool's workers import the glue from its own URL (mainScriptUrlOrBlob): a bundler that
// renamed the glue still gets the right file.
Module['mainScriptUrlOrBlob'] = Module['mainScriptUrlOrBlob'] || _scriptDir;
// pe.dispose(): the core's pool joins its threads, then the workers that hosted them end.
Module['posencStop'] = function () {
  Module['setThreads'](1);
  PThread.terminateAllThreads();
};
// Memory is shared and may grow: an allocation on a worker leaves this thread's views over the
// old, shorter buffer (Emscripten re-takes them only in its own library code). The views the API
// reads (Module.HEAPU8 ...) are re-taken whenever the memory's buffer has changed.
['HEAPU8', 'HEAPU16', 'HEAP32', 'HEAPF32', 'HEAPF64'].forEach(function (name) {
  var view;
  Object.defineProperty(Module, name, {
    get: function () {
      if (wasmMemory && buffer != wasmMemory.buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
      return view;
    },
    set: function (value) {
      view = value;
    },
  });
});
// init() rejects when a worker of the pool cannot load, instead of waiting for it forever
// (Emscripten 3.1.6 listens to a worker's errors only once the .wasm is compiled, and then only
// logs and rethrows them: its ready promise, which waits for every worker's 'loaded', never
// settles). The pool's workers are watched from the moment they are created (PThread's postset,
// cmake/threads_library.js, calls this right after PThread.init() with the worker script's file
// name): any 'error' before the module is ready (the worker script missing or refused, the glue
// not importable from the worker, an exception while it starts; Node's NodeWorker also reports a
// worker that exited first) ends every worker and rejects init() with an Error that names the
// script and what failed. Errors after that are Emscripten's, as before.
function posencWatchPool(workerFile) {
  if (ENVIRONMENT_IS_PTHREAD) return;
  var loading = true;
  var settled = function () {
    loading = false;
  };
  // (Both ways: a rejection left unhandled here would be an uncaught error of its own.)
  Module['ready'].then(settled, settled);
  var fail = function (event) {
    if (!loading) return;
    loading = false;
    // Handled here: not also reported as an uncaught error of the page.
    if (event['preventDefault']) event['preventDefault']();
    // A script that could not be fetched or was refused gives a plain Event, without a message.
    var what =
      event['message'] ||
      'its script could not be fetched or was refused (HTTP error, network, Content-Security-Policy, or no Cross-Origin-Embedder-Policy header on an isolated page)';
    var url = event['filename'] || new URL(workerFile, _scriptDir).href;
    PThread.unusedWorkers.forEach(function (worker) {
      worker.onerror = worker.onmessage = null;
    });
    PThread.terminateAllThreads();
    var message = 'posenc.init: a worker of the thread pool failed to load (' + url + ': ' + what + '); init({ threads: 1 }) runs without workers (docs/API.md, "Threads")';
    readyPromiseReject(new Error(message, { 'cause': event['error'] || event }));
  };
  PThread.unusedWorkers.forEach(function (worker) {
    // (A Worker class without addEventListener, some other global Worker in Node, is not watched.)
    if (worker['addEventListener']) worker['addEventListener']('error', fail);
  });
}
