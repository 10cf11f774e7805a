# The wasm modules of the npm package: one per core build (SIMD and baseline), each an ES module
# glue file plus its .wasm, written to dist/ by `npm run build` (scripts/build.mjs). The bindings
# are embind (bindings/bind_*.cpp: the classes SinusoidalEncoder, TransformerEncoderLayer, Model;
# bindings/rotary_bindings.cpp: Rotary, Alibi, Sincos2d;
# the limits, enums and value objects the JS layer reads in bindings/js/core.js); malloc and free
# are the only plain exports. -sDYNAMIC_EXECUTION=0 keeps embind from building its invokers with
# `new Function`, so a strict Content-Security-Policy (script-src 'self' 'wasm-unsafe-eval')
# works; it makes an embind call cost about 0.2 us more (README.md, "Binding design").
#
# Size (what an app loads stays under 100 KB gzipped; tests/js/size.test.mjs measures it):
# emmalloc instead of dlmalloc (3 KB less gzipped; measured no slower: the API allocates at most a
# few blocks per call), no exception or RTTI support linked in (the core neither throws nor uses
# typeid; embind then identifies types by address, EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0), and
# link-time optimization over the core, the bindings and Emscripten's LTO system libraries (1.5 KB
# less gzipped, measured as fast or slightly faster). The link keeps the Release -O3: -Os or -Oz at
# link time made the encoder layer about 6% slower, and -Oz also links libc's smaller log and
# byte-loop memcpy. -sTEXTDECODER=2: every target (browsers, workers, Node) has TextDecoder, so the
# glue's hand-written UTF-8 decoding fallback is left out (212 B less gzipped). CMakeLists.txt compiles the code that does not run per element with -Oz (kept
# through LTO as the functions' size attributes). embind_unused_types.js keeps the converters of
# embind's built-in types the bindings never use (wide strings, val, memory views) out of the glue
# (570 B less gzipped). --wrap=siprintf sends embind's one printf call to bindings/type_name.cpp,
# so that musl's printf is not linked (2.6 KB less gzipped).
set(POSENC_WASM_LINK_OPTIONS
  -sMODULARIZE=1
  -sEXPORT_ES6=1
  -sENVIRONMENT=web,worker
  -sALLOW_MEMORY_GROWTH=1
  -sABORTING_MALLOC=0
  -sMALLOC=emmalloc
  -sFILESYSTEM=0
  -sDYNAMIC_EXECUTION=0
  -sTEXTDECODER=2
  -lembind
  -sINCOMING_MODULE_JS_API=wasmBinary,locateFile,instantiateWasm
  -sEXPORTED_FUNCTIONS=_malloc,_free
  -sEXPORTED_RUNTIME_METHODS=[]
  -fno-exceptions
  -fno-rtti
  -flto
  --no-entry
  -Wl,--wrap=siprintf
  "SHELL:--js-library ${CMAKE_CURRENT_LIST_DIR}/embind_unused_types.js"
)

# The glue through Closure Compiler (ADVANCED, as emcc runs it): 400 B less gzipped than terser
# alone after the rest of the size work (scripts/build.mjs minifies the glue again). emcc finds the
# compiler through EM_CLOSURE_COMPILER; scripts/build.mjs sets it to the npm devDependency
# google-closure-compiler and turns this on. Off by default, so a plain `emcmake cmake` build needs
# no Closure.
option(POSENC_WASM_CLOSURE "Run Closure Compiler over the wasm modules' JS glue (needs EM_CLOSURE_COMPILER)" OFF)
if(POSENC_WASM_CLOSURE)
  list(APPEND POSENC_WASM_LINK_OPTIONS "SHELL:--closure 1")
endif()

# Binaryen's optimizer once more over the linked .wasm: emcc runs `wasm-opt -O3` before its
# metadce pass, which then removes what the glue does not use (runtime exports and what only
# they reached); optimizing after that takes 380 B gzipped off the main entry's .wasm (measured;
# the benches unchanged). The flags are the ones emcc passes to its own wasm-opt run (features:
# MVP, plus SIMD for the SIMD build); import and export names are kept, so the glue still matches.
find_program(POSENC_WASM_OPT wasm-opt)
if(NOT POSENC_WASM_OPT)
  message(WARNING "wasm-opt (binaryen) not found: the .wasm files are left as emcc wrote them (larger)")
endif()

# name: the target (and .mjs/.wasm name); core: the core library; the rest: the binding sources.
function(posenc_add_wasm_module name core)
  add_executable(${name} ${ARGN} ${PROJECT_SOURCE_DIR}/bindings/type_name.cpp)
  target_link_libraries(${name} PRIVATE ${core})
  # Without RTTI embind identifies types by address and cannot name an unbound one in its errors.
  target_compile_definitions(${name} PRIVATE EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0)
  target_compile_options(${name} PRIVATE ${POSENC_WARNINGS} -fno-exceptions -fno-rtti -flto)
  target_link_options(${name} PRIVATE ${POSENC_WASM_LINK_OPTIONS} -sEXPORT_NAME=${name})
  set_target_properties(${name} PROPERTIES SUFFIX ".mjs" LINK_DEPENDS ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embind_unused_types.js)
  # (Not the threaded modules: their memory is shared and filled by the main thread, which
  # --zero-filled-memory may not assume; they are outside the main entry's budget.)
  if(POSENC_WASM_OPT AND NOT core STREQUAL "posenc_core_threads")
    set(features --mvp-features)
    if(core STREQUAL "posenc")  # the SIMD core (CMakeLists.txt)
      list(APPEND features --enable-simd)
    endif()
    # Beside the .mjs (OUTPUT_NAME may be set after this call).
    set(wasm "$<TARGET_FILE_DIR:${name}>/$<TARGET_FILE_BASE_NAME:${name}>.wasm")
    add_custom_command(TARGET ${name} POST_BUILD
      COMMAND ${POSENC_WASM_OPT} -O3 --low-memory-unused --zero-filled-memory ${features} ${wasm} -o ${wasm}
      VERBATIM)
  endif()
endfunction()

# The package's main entry (`posenc`): every family of encodings (the paper's, rotary, ALiBi, 2D)
# and the transformer (layer, model, safetensors reader).
set(POSENC_BINDINGS bindings/bind_core.cpp bindings/bind_encoder.cpp bindings/bind_nn.cpp
                    bindings/rotary_bindings.cpp)
posenc_add_wasm_module(posenc_simd posenc ${POSENC_BINDINGS})
posenc_add_wasm_module(posenc_baseline_module posenc_baseline ${POSENC_BINDINGS})
set_target_properties(posenc_baseline_module PROPERTIES OUTPUT_NAME posenc_baseline)

# `posenc/encoding`, the lighter entry: every family of encodings without the transformer. Linked
# without bind_nn.cpp, the core's layer, model and safetensors reader drop out of the .wasm
# (README.md, "Bundlers").
set(POSENC_ENCODING_BINDINGS bindings/bind_core.cpp bindings/bind_encoder.cpp
                             bindings/rotary_bindings.cpp)
posenc_add_wasm_module(posenc_encoding_simd posenc ${POSENC_ENCODING_BINDINGS})
posenc_add_wasm_module(posenc_encoding_baseline_module posenc_baseline ${POSENC_ENCODING_BINDINGS})
set_target_properties(posenc_encoding_baseline_module PROPERTIES OUTPUT_NAME posenc_encoding_baseline)

# The threaded modules (init({ threads }) with threads > 1, where SharedArrayBuffer is available):
# SIMD + pthreads over the posenc_core_threads core. The workers run Emscripten's worker script
# (<name>.worker.js), which imports the glue; a pool of POSENC_POOL_SIZE workers (the JS entry
# passes threads - 1 as Module.posencPool) is started with the module, so no thread ever waits for
# a worker to load. cmake/threads_pre.js lets the Node entry hand the glue a Worker class and
# points the workers at the glue's own URL (bundlers rename it). Memory: shared, so growable
# memory is still allowed (JS views are re-taken after every call: memory.js).
if(POSENC_WASM_THREADS)
  set(POSENC_THREADS_LINK_OPTIONS
    -pthread
    "SHELL:-sPTHREAD_POOL_SIZE='Module[\"posencPool\"]'"
    -Wno-pthreads-mem-growth
    "SHELL:--pre-js ${CMAKE_CURRENT_LIST_DIR}/threads_pre.js"
    "SHELL:--js-library ${CMAKE_CURRENT_LIST_DIR}/threads_library.js"
  )
  foreach(entry IN ITEMS posenc posenc_encoding)
    if(entry STREQUAL "posenc")
      set(sources ${POSENC_BINDINGS})
    else()
      set(sources ${POSENC_ENCODING_BINDINGS})
    endif()
    posenc_add_wasm_module(${entry}_threads posenc_core_threads ${sources})
    target_compile_options(${entry}_threads PRIVATE -pthread)
    target_link_options(${entry}_threads PRIVATE ${POSENC_THREADS_LINK_OPTIONS})
    set_property(TARGET ${entry}_threads APPEND PROPERTY LINK_DEPENDS
                 ${CMAKE_CURRENT_LIST_DIR}/threads_pre.js ${CMAKE_CURRENT_LIST_DIR}/threads_library.js)
  endforeach()
endif()
