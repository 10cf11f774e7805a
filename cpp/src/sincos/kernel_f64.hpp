// Internal: float64 sines and cosines of many frequencies at one position, and float64 angle
// addition rounded once to float32: the row generator of the rotary embedding (and any family that
// wants correctly rounded float32 values rather than the float32 angle addition of kernels.hpp).
// `scalar` (portable) and `simd` (wasm SIMD128 f64x2, natively through simde for the tests) give
// bit-identical results: the same operations in the same order (no FMA contraction: neither wasm
// nor the baseline x86-64 target has one).
#pragma once

#include <cstdint>

#include "sincos/kernel_math.hpp"

namespace posenc::detail {

namespace scalar {

// Dekker's split of a double into two halves of 26 bits (a = hi + lo exactly).
inline void split_f64(double a, double& hi, double& lo) {
  const double t = 134217729.0 * a;  // 2^27 + 1
  hi = t - (t - a);
  lo = a - hi;
}

// s[i] = sin(p w[i]), c[i] = cos(p w[i]) for i < n, in float64, of the EXACT product p w[i]: the
// rounding error of p * w[i] (up to 2^-29 absolute at p = 2^24) is recovered by Dekker's
// two-product and added to the reduced angle. Cody-Waite reduction and the fdlibm polynomials of
// kernel_math.hpp: error below 2^-50 absolute. Requires 0 <= p w[i] <= kReduceLimit.
inline void sincos_f64(const double* w, std::int64_t n, double p, double* s, double* c) {
  double ph, pl;
  split_f64(p, ph, pl);
  for (std::int64_t i = 0; i < n; ++i) {
    double wh, wl, k, sr, cr;
    split_f64(w[i], wh, wl);
    const double x = p * w[i];
    const double x_err = ((ph * wh - x) + ph * wl + pl * wh) + pl * wl;
    sincos_reduced_f64(reduce_pio2(x, k) + x_err, sr, cr);
    apply_quadrant(static_cast<std::int64_t>(k), sr, cr, s[i], c[i]);
  }
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

}  // namespace scalar

}  // namespace posenc::detail

#if defined(__wasm_simd128__) || defined(POSENC_SIMD_VIA_SIMDE)
#include "sincos/kernel_simd.hpp"

namespace posenc::detail::simd {

// (sin r, cos r) -> (sin x, cos x) for two float64 lanes, x = r + k pi/2 (k float64 integers).
inline void apply_quadrant_f64(v128_t k, v128_t& s, v128_t& c) {
  const v128_t q32 = wasm_i32x4_trunc_sat_f64x2_zero(k);      // [q0, q1, 0, 0]
  const v128_t q = wasm_i32x4_shuffle(q32, q32, 0, 0, 1, 1);  // each q in both halves
  const v128_t one = wasm_i32x4_splat(1), two = wasm_i32x4_splat(2);
  const v128_t sign_bits = wasm_i64x2_splat(static_cast<std::int64_t>(0x8000000000000000ull));
  const v128_t swap = wasm_i32x4_eq(wasm_v128_and(q, one), one);
  const v128_t s_neg = wasm_i32x4_eq(wasm_v128_and(q, two), two);
  const v128_t c_neg = wasm_i32x4_eq(wasm_v128_and(wasm_i32x4_add(q, one), two), two);
  const v128_t sr = s;
  s = wasm_v128_xor(wasm_v128_bitselect(c, sr, swap), wasm_v128_and(s_neg, sign_bits));
  c = wasm_v128_xor(wasm_v128_bitselect(sr, c, swap), wasm_v128_and(c_neg, sign_bits));
}

// See scalar::sincos_f64 (the same operations, two lanes at a time); n even.
inline void sincos_f64(const double* w, std::int64_t n, double p, double* s, double* c) {
  const v128_t vp = wasm_f64x2_splat(p);
  double ph_s, pl_s;
  scalar::split_f64(p, ph_s, pl_s);
  const v128_t ph = wasm_f64x2_splat(ph_s), pl = wasm_f64x2_splat(pl_s);
  const v128_t splitter = wasm_f64x2_splat(134217729.0);
  for (std::int64_t i = 0; i < n; i += 2) {
    v128_t k, sv, cv;
    const v128_t vw = wasm_v128_load(w + i);
    const v128_t t = wasm_f64x2_mul(splitter, vw);
    const v128_t wh = wasm_f64x2_sub(t, wasm_f64x2_sub(t, vw));
    const v128_t wl = wasm_f64x2_sub(vw, wh);
    const v128_t x = wasm_f64x2_mul(vp, vw);
    v128_t x_err =
        wasm_f64x2_add(wasm_f64x2_sub(wasm_f64x2_mul(ph, wh), x), wasm_f64x2_mul(ph, wl));
    x_err = wasm_f64x2_add(wasm_f64x2_add(x_err, wasm_f64x2_mul(pl, wh)), wasm_f64x2_mul(pl, wl));
    sincos_reduced_f64(wasm_f64x2_add(reduce_pio2(x, k), x_err), sv, cv);
    apply_quadrant_f64(k, sv, cv);
    wasm_v128_store(s + i, sv);
    wasm_v128_store(c + i, cv);
  }
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
