// Internal: the rotation kernels of RotaryEmbedding::apply, `scalar` and its wasm SIMD twin
// `simd` (bit-identical: the same float32 products and sums in the same order), and the row
// generator they share (float64 angles, sincos/kernel_f64.hpp). The build's kernels are
// `detail::rotary_kernel`.
#pragma once

#include <cstdint>

#include "sincos/kernel_f64.hpp"

namespace posenc::detail {

namespace scalar {

// Each head h < heads of x (head_dim floats apart): for i < n, the pair (x_i, x_{i+n}) becomes
// (x_i c_i - x_{i+n} s_i, x_{i+n} c_i + x_i s_i). Channels from 2n on are not touched.
inline void rotate_half(const float* c, const float* s, std::int64_t n, std::int64_t heads,
                        std::int64_t head_dim, float* x) {
  for (std::int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (std::int64_t i = 0; i < n; ++i) {
      const float a = v[i], b = v[i + n];
      v[i] = a * c[i] - b * s[i];
      v[i + n] = b * c[i] + a * s[i];
    }
  }
}

// Interleaved pairs (x_{2i}, x_{2i+1}) with cd = each cosine twice and ss = (-s_i, s_i):
// x_j becomes x_j cd_j + x_{j^1} ss_j for j < rotary_dim.
inline void rotate_interleaved(const float* cd, const float* ss, std::int64_t rotary_dim,
                               std::int64_t heads, std::int64_t head_dim, float* x) {
  for (std::int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (std::int64_t j = 0; j < rotary_dim; j += 2) {
      const float a = v[j], b = v[j + 1];
      v[j] = a * cd[j] + b * ss[j];
      v[j + 1] = b * cd[j + 1] + a * ss[j + 1];
    }
  }
}

}  // namespace scalar

#if defined(__wasm_simd128__) || defined(POSENC_SIMD_VIA_SIMDE)
namespace simd {

inline void rotate_half(const float* c, const float* s, std::int64_t n, std::int64_t heads,
                        std::int64_t head_dim, float* x) {
  const std::int64_t n4 = n / 4 * 4;
  for (std::int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (std::int64_t i = 0; i < n4; i += 4) {
      const v128_t a = wasm_v128_load(v + i), b = wasm_v128_load(v + i + n);
      const v128_t vc = wasm_v128_load(c + i), vs = wasm_v128_load(s + i);
      wasm_v128_store(v + i, wasm_f32x4_sub(wasm_f32x4_mul(a, vc), wasm_f32x4_mul(b, vs)));
      wasm_v128_store(v + i + n, wasm_f32x4_add(wasm_f32x4_mul(b, vc), wasm_f32x4_mul(a, vs)));
    }
    for (std::int64_t i = n4; i < n; ++i) {
      const float a = v[i], b = v[i + n];
      v[i] = a * c[i] - b * s[i];
      v[i + n] = b * c[i] + a * s[i];
    }
  }
}

inline void rotate_interleaved(const float* cd, const float* ss, std::int64_t rotary_dim,
                               std::int64_t heads, std::int64_t head_dim, float* x) {
  const std::int64_t r4 = rotary_dim / 4 * 4;
  for (std::int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (std::int64_t j = 0; j < r4; j += 4) {
      const v128_t a = wasm_v128_load(v + j);
      const v128_t swapped = wasm_i32x4_shuffle(a, a, 1, 0, 3, 2);
      wasm_v128_store(v + j, wasm_f32x4_add(wasm_f32x4_mul(a, wasm_v128_load(cd + j)),
                                            wasm_f32x4_mul(swapped, wasm_v128_load(ss + j))));
    }
    for (std::int64_t j = r4; j < rotary_dim; j += 2) {
      const float a = v[j], b = v[j + 1];
      v[j] = a * cd[j] + b * ss[j];
      v[j + 1] = b * cd[j + 1] + a * ss[j + 1];
    }
  }
}

}  // namespace simd
#endif

#if defined(__wasm_simd128__)
namespace rotary_kernel = simd;
#else
namespace rotary_kernel = scalar;
#endif

}  // namespace posenc::detail
