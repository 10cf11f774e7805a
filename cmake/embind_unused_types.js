// An Emscripten JS library linked into the wasm modules (cmake/wasm_module.cmake): embind's
// built-in types that posenc's bindings never use (std::wstring, std::u16string, std::u32string,
// emscripten::val, typed_memory_view) are registered as nothing, so their converters (UTF-16 and
// UTF-32 strings, val handles, memory views) stay out of the glue: 570 B less gzipped. Embind
// registers these types at startup whether or not a binding uses them. A bound function or method
// that did use one would throw embind's UnboundTypeError ("... due to unbound types") when called;
// remove its entry here then. Written for Emscripten 3.1.6's embind (src/embind/embind.js).
mergeInto(LibraryManager.library, {
  _embind_register_std_wstring: function (rawType, charSize, name) {},
  _embind_register_emval: function (rawType, name) {},
  _embind_register_memory_view: function (rawType, dataTypeIndex, name) {},
});
