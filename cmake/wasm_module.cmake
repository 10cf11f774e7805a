# The wasm modules of the npm package: one per core build (SIMD and baseline), each an ES module
# glue file plus its .wasm, written to dist/ by `npm run build` (scripts/build.mjs). The bindings
# are plain C exports (bindings/exports*.cpp), wrapped in JavaScript by bindings/js/handles.js.
set(POSENC_WASM_LINK_OPTIONS
  -sMODULARIZE=1
  -sEXPORT_ES6=1
  -sENVIRONMENT=web,worker
  -sALLOW_MEMORY_GROWTH=1
  -sABORTING_MALLOC=0
  -sFILESYSTEM=0
  -sDYNAMIC_EXECUTION=0
  -sINCOMING_MODULE_JS_API=wasmBinary,locateFile,instantiateWasm
  -sEXPORTED_FUNCTIONS=_malloc,_free
  -sEXPORTED_RUNTIME_METHODS=[]
  --no-entry
)

function(posenc_add_wasm_module name core)
  add_executable(${name} bindings/exports.cpp bindings/exports_layer.cpp bindings/exports_presets.cpp)
  target_link_libraries(${name} PRIVATE ${core})
  target_compile_options(${name} PRIVATE ${POSENC_WARNINGS})
  target_link_options(${name} PRIVATE ${POSENC_WASM_LINK_OPTIONS} -sEXPORT_NAME=${name})
  set_target_properties(${name} PROPERTIES SUFFIX ".mjs")
endfunction()

posenc_add_wasm_module(posenc_simd posenc)
posenc_add_wasm_module(posenc_baseline_module posenc_baseline)
set_target_properties(posenc_baseline_module PROPERTIES OUTPUT_NAME posenc_baseline)
