// Internal: copying a row of floats inside wasm memory. Emscripten's memcpy hands every copy of
// 512 bytes or more to JavaScript (emscripten_memcpy_big: copyWithin), which is fast for one large
// block but costs a JS round trip per call: row-by-row copies of 1-4 KB ran at about 1 GB/s. This
// copy stays in wasm (v128 loads and stores in the SIMD build); no_builtin keeps the compiler from
// turning the loop back into a memcpy call. Natively it is memcpy.
#pragma once

#include <cstddef>
#include <cstring>

#include "hot_entry.hpp"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace posenc::detail {

#if defined(__EMSCRIPTEN__)
__attribute__((no_builtin("memcpy"), noinline)) inline void copy_floats(float* dst,
                                                                        const float* src,
                                                                        std::size_t n) {
  std::size_t i = 0;
#if defined(__wasm_simd128__)
  for (; i + 8 <= n; i += 8) {
    const v128_t a = wasm_v128_load(src + i), b = wasm_v128_load(src + i + 4);
    wasm_v128_store(dst + i, a);
    wasm_v128_store(dst + i + 4, b);
  }
  // The tail: at most 7 floats, not worth the unrolled copies the compiler would add (module size).
  POSENC_NO_UNROLL
#endif
  for (; i < n; ++i)
    dst[i] = src[i];
}
#else
inline void copy_floats(float* dst, const float* src, std::size_t n) {
  std::memcpy(dst, src, n * sizeof(float));
}
#endif

}  // namespace posenc::detail
