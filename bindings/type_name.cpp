// embind's one use of printf, replaced. Without RTTI (EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0)
// embind names a type it has no binding for by its type id's address, `sprintf(str, "%p", ti)` in
// __getTypeName (Emscripten 3.1.6, system/lib/embind/bind.cpp), which LTO turns into a call of
// siprintf and links musl's whole printf for (2.7 KB of code, 2.6 KB of the .wasm gzipped). The
// link wraps siprintf (cmake/wasm_module.cmake, -Wl,--wrap=siprintf), so that call lands here:
// the address in hexadecimal, as "%p" writes it. Nothing else in the modules calls siprintf (the
// link would use this for it too: the format is not read).
#include <cstdarg>
#include <cstdint>

extern "C" int __wrap_siprintf(char* s, const char* format, ...) {
  va_list args;
  va_start(args, format);
  auto v = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(va_arg(args, void*)));
  va_end(args);
  int n = 0;
  s[n++] = '0';
  s[n++] = 'x';
  int shift = 28;
  while (shift > 0 && (v >> shift) == 0)
    shift -= 4;
  for (; shift >= 0; shift -= 4)
    s[n++] = "0123456789abcdef"[(v >> shift) & 15];
  s[n] = 0;
  return n;
}
