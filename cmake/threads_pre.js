// Prepended to the threaded modules' glue (cmake/wasm_module.cmake), inside the module's factory.
// The pool's workers import the glue from its own URL (mainScriptUrlOrBlob): a bundler that
// renamed the glue still gets the right file.
Module['mainScriptUrlOrBlob'] = Module['mainScriptUrlOrBlob'] || _scriptDir;
// pe.dispose(): the core's pool joins its threads, then the workers that hosted them end.
Module['posencStop'] = function () {
  Module['setThreads'](1);
  PThread.terminateAllThreads();
};
