# wasm module: added with the bindings
