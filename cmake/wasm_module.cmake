# The wasm modules of the npm package: one per core build (SIMD and baseline), each an ES module
# glue file plus its .wasm, written to dist/ by `npm run build` (scripts/build.mjs). The bindings
# are plain C exports (bindings/exports*.cpp), wrapped in JavaScript by bindings/js/handles.js.
#
# Size (issue 5: what an app loads stays under 60 KB gzipped; tests/js/size.test.mjs measures it):
# emmalloc instead of dlmalloc (3 KB less gzipped; measured no slower: the API allocates at most a
# few blocks per call), no exception or RTTI support linked in (the core neither throws nor uses
# typeid), and link-time optimization over the core, the bindings and Emscripten's LTO system
# libraries (1.5 KB less gzipped, measured as fast or slightly faster). The link keeps the Release
# -O3: -Os or -Oz at link time made the encoder layer about 6% slower, and -Oz also links libc's
# smaller log and byte-loop memcpy. CMakeLists.txt compiles the code that does not run per element
# with -Oz (kept through LTO as the functions' size attributes).
set(POSENC_WASM_LINK_OPTIONS
  -sMODULARIZE=1
  -sEXPORT_ES6=1
  -sENVIRONMENT=web,worker
  -sALLOW_MEMORY_GROWTH=1
  -sABORTING_MALLOC=0
  -sMALLOC=emmalloc
  -sFILESYSTEM=0
  -sDYNAMIC_EXECUTION=0
  -sINCOMING_MODULE_JS_API=wasmBinary,locateFile,instantiateWasm
  -sEXPORTED_FUNCTIONS=_malloc,_free
  -sEXPORTED_RUNTIME_METHODS=[]
  -fno-exceptions
  -fno-rtti
  -flto
  --no-entry
)

# bindings/rotary_bindings.cpp (the rotary, ALiBi and 2D families) is embind: -lembind, and
# without RTTI embind identifies types by address (EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0).
set_source_files_properties(bindings/rotary_bindings.cpp PROPERTIES COMPILE_DEFINITIONS
                            EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0)
function(posenc_add_wasm_module name core)
  add_executable(${name} bindings/exports.cpp bindings/exports_layer.cpp bindings/exports_presets.cpp
                         bindings/rotary_bindings.cpp)
  target_link_libraries(${name} PRIVATE ${core})
  target_compile_options(${name} PRIVATE ${POSENC_WARNINGS} -fno-exceptions -fno-rtti -flto)
  target_link_options(${name} PRIVATE ${POSENC_WASM_LINK_OPTIONS} -sEXPORT_NAME=${name} -lembind)
  set_target_properties(${name} PROPERTIES SUFFIX ".mjs")
endfunction()

posenc_add_wasm_module(posenc_simd posenc)
posenc_add_wasm_module(posenc_baseline_module posenc_baseline)
set_target_properties(posenc_baseline_module PROPERTIES OUTPUT_NAME posenc_baseline)
