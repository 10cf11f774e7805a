// The threaded modules' JS library (cmake/wasm_module.cmake). posenc's calls wait on the calling
// thread by design (the synchronous API stays synchronous: a browser's main thread spins while
// the pool finishes a call, and pe.dispose() joins the workers), so Emscripten's one-time console
// warning about blocking on the main thread is left out.
mergeInto(LibraryManager.library, {
  emscripten_check_blocking_allowed: function () {},
});
