// Internal: float64 sines and cosines of many frequencies at one position, and float64 angle
// addition rounded once to float32: the row generator of the rotary embedding (and any family that
// wants correctly rounded float32 values rather than the float32 angle addition of kernels.hpp).
// `scalar` (portable) and `simd` (wasm SIMD128 f64x2, natively through simde for the tests) give
// bit-identical results: the same operations in the same order (no FMA contraction: neither wasm
// nor the baseline x86-64 target has one).
#pragma once

#include <cstdint>

#include "sincos/kernel_math.hpp"
#include "sincos/kernels.hpp"

namespace posenc::detail {

namespace scalar {

// s[i] = sin(p w[i]), c[i] = cos(p w[i]) for i < n, in float64, of the EXACT product p w[i]
// (w[i] + lo[i] for real frequencies): the sinusoidal kernels' sincos_row (kernels.hpp;
// two-product, double-double reduction by pi/2, the fdlibm polynomials), error below 2^-53
// absolute. Requires 0 <= p w[i] <= kReduceLimit.
inline void sincos_f64(const SplitFrequencies& F, std::int64_t n, double p, double* s, double* c) {
  sincos_row(F, n, p, s, c);
}

// Angle addition in float64, one rounding to float32 at the end:
// s[i] = float32(scale * (sa cd + ca sd)), c[i] = float32(scale * (ca cd - sa sd)).
// With float64 inputs within 2^-50 of sin/cos(a w), sin/cos(d w), the result before rounding is
// within about 2^-49 of scale * sin/cos((a + d) w).
inline void rotate_to_f32(const double* sa, const double* ca, const double* sd, const double* cd,
                          std::int64_t n, double scale, float* s, float* c) {
  if (scale == 1.0) {  // the same values without the exact multiplication by 1
    for (std::int64_t i = 0; i < n; ++i) {
      s[i] = static_cast<float>(sa[i] * cd[i] + ca[i] * sd[i]);
      c[i] = static_cast<float>(ca[i] * cd[i] - sa[i] * sd[i]);
    }
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    s[i] = static_cast<float>((sa[i] * cd[i] + ca[i] * sd[i]) * scale);
    c[i] = static_cast<float>((ca[i] * cd[i] - sa[i] * sd[i]) * scale);
  }
}

// The same with scale 1 and each value the float32 nearest to the exact sin / cos(p w[i]) of the
// row's position p (0 <= p w[i] <= kReduceLimit): the paper table's rounding test, rounded_exact
// for the rare hard cases.
inline void rotate1_exact(const double* sa, const double* ca, const double* sd, const double* cd,
                          std::int64_t i, double p, const SplitFrequencies& F, float& s, float& c) {
  s = rounded_at(sa[i] * cd[i] + ca[i] * sd[i], p, F, i, false);
  c = rounded_at(ca[i] * cd[i] - sa[i] * sd[i], p, F, i, true);
}

inline void rotate_to_f32_exact(const double* sa, const double* ca, const double* sd,
                                const double* cd, std::int64_t n, double p,
                                const SplitFrequencies& F, float* s, float* c) {
  for (std::int64_t i = 0; i < n; ++i)
    rotate1_exact(sa, ca, sd, cd, i, p, F, s[i], c[i]);
}

}  // namespace scalar

}  // namespace posenc::detail

#if defined(__wasm_simd128__) || defined(POSENC_SIMD_VIA_SIMDE)
#include "sincos/kernel_simd.hpp"

namespace posenc::detail::simd {

// See scalar::sincos_f64 (the same operations, two lanes at a time); n even.
inline void sincos_f64(const SplitFrequencies& F, std::int64_t n, double p, double* s, double* c) {
  sincos_row(F, n, p, s, c);
}

// See scalar::rotate_to_f32; n a multiple of 4.
template <bool Scaled>
inline void rotate_to_f32_impl(const double* sa, const double* ca, const double* sd,
                               const double* cd, std::int64_t n, double scale, float* s, float* c) {
  const v128_t vs = wasm_f64x2_splat(scale);
  auto half = [&](std::int64_t i, v128_t& so, v128_t& co) {
    const v128_t a_s = wasm_v128_load(sa + i), a_c = wasm_v128_load(ca + i);
    const v128_t d_s = wasm_v128_load(sd + i), d_c = wasm_v128_load(cd + i);
    so = wasm_f64x2_add(wasm_f64x2_mul(a_s, d_c), wasm_f64x2_mul(a_c, d_s));
    co = wasm_f64x2_sub(wasm_f64x2_mul(a_c, d_c), wasm_f64x2_mul(a_s, d_s));
    if constexpr (Scaled) {
      so = wasm_f64x2_mul(so, vs);
      co = wasm_f64x2_mul(co, vs);
    }
  };
  for (std::int64_t i = 0; i < n; i += 4) {
    v128_t s0, c0, s1, c1;
    half(i, s0, c0);
    half(i + 2, s1, c1);
    wasm_v128_store(s + i,
                    join_low(wasm_f32x4_demote_f64x2_zero(s0), wasm_f32x4_demote_f64x2_zero(s1)));
    wasm_v128_store(c + i,
                    join_low(wasm_f32x4_demote_f64x2_zero(c0), wasm_f32x4_demote_f64x2_zero(c1)));
  }
}

inline void rotate_to_f32(const double* sa, const double* ca, const double* sd, const double* cd,
                          std::int64_t n, double scale, float* s, float* c) {
  if (scale == 1.0) {
    rotate_to_f32_impl<false>(sa, ca, sd, cd, n, scale, s, c);
  } else {
    rotate_to_f32_impl<true>(sa, ca, sd, cd, n, scale, s, c);
  }
}

// Frequencies i..i+3 of scalar::rotate1_exact: the float64 sums two lanes at a time, the rounding
// test of the paper's kernels (round4), the rare hard lanes recomputed.
inline void rotate4_exact(const double* sa, const double* ca, const double* sd, const double* cd,
                          std::int64_t i, double p, const SplitFrequencies& F, v128_t& s4,
                          v128_t& c4) {
  v128_t sv[2], cv[2];
  for (int h = 0; h < 2; ++h) {
    const std::int64_t j = i + 2 * h;
    const v128_t a_s = wasm_v128_load(sa + j), a_c = wasm_v128_load(ca + j);
    const v128_t d_s = wasm_v128_load(sd + j), d_c = wasm_v128_load(cd + j);
    sv[h] = wasm_f64x2_add(wasm_f64x2_mul(a_s, d_c), wasm_f64x2_mul(a_c, d_s));
    cv[h] = wasm_f64x2_sub(wasm_f64x2_mul(a_c, d_c), wasm_f64x2_mul(a_s, d_s));
  }
  v128_t hs, hc;
  s4 = round4(sv[0], sv[1], hs);
  c4 = round4(cv[0], cv[1], hc);
  if (wasm_v128_any_true(wasm_v128_or(hs, hc))) {
    s4 = fix_hard(s4, hs, p, F, i, false);
    c4 = fix_hard(c4, hc, p, F, i, true);
  }
}

// See scalar::rotate_to_f32_exact; n a multiple of 4.
inline void rotate_to_f32_exact(const double* sa, const double* ca, const double* sd,
                                const double* cd, std::int64_t n, double p,
                                const SplitFrequencies& F, float* s, float* c) {
  for (std::int64_t i = 0; i < n; i += 4) {
    v128_t s4, c4;
    rotate4_exact(sa, ca, sd, cd, i, p, F, s4, c4);
    wasm_v128_store(s + i, s4);
    wasm_v128_store(c + i, c4);
  }
}

}  // namespace posenc::detail::simd
#endif

// The float64 row kernels this build runs.
namespace posenc::detail {
#if defined(__wasm_simd128__)
namespace f64_kernel = simd;
#else
namespace f64_kernel = scalar;
#endif
}  // namespace posenc::detail
