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
['HEAPU8', 'HEAP32', 'HEAPF32', 'HEAPF64'].forEach(function (name) {
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
