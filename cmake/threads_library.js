// The threaded modules' JS library (cmake/wasm_module.cmake). posenc's calls wait on the calling
// thread by design (the synchronous API stays synchronous: a browser's main thread spins while
// the pool finishes a call, and pe.dispose() joins the workers), so Emscripten's one-time console
// warning about blocking on the main thread is left out.
mergeInto(LibraryManager.library, {
  emscripten_check_blocking_allowed: function () {},
  // library_pthread.js's postset is 'PThread.init();', which starts the pool's workers; then
  // posencWatchPool (cmake/threads_pre.js) watches them for an error before they load, given the
  // worker script's file name (it is written only inside PThread.allocateUnusedWorker).
  $PThread__postset: "PThread.init(); posencWatchPool('{{{ PTHREAD_WORKER_FILE }}}');",
});
