// Internal: the wasm SIMD128 kernels, four frequencies per vector; same contract as
// posenc::detail::scalar in kernels.hpp and bit-identical results for anchors and rotate_row
// (same operations in the same order; direct_row too, since the float32 polynomial is evaluated
// in the same order). Header-only so the tests can also compile it natively through simde
// (define POSENC_SIMD_VIA_SIMDE before including it).
#pragma once

#include <cstdint>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(POSENC_SIMD_VIA_SIMDE)
#define SIMDE_WASM_SIMD128_ENABLE_NATIVE_ALIASES
#include <simde/wasm/simd128.h>
#else
#error "kernel_simd.hpp needs -msimd128 (or POSENC_SIMD_VIA_SIMDE natively)"
#endif

#include "kernel_math.hpp"

namespace posenc::detail::simd {

// Reduces two float64 angles: returns r, sets k (float64 integers).
inline v128_t reduce_pio2(v128_t x, v128_t& k) {
  k = wasm_f64x2_nearest(wasm_f64x2_mul(x, wasm_f64x2_splat(kTwoOverPi)));
  v128_t r = wasm_f64x2_sub(x, wasm_f64x2_mul(k, wasm_f64x2_splat(kPio2Part1)));
  r = wasm_f64x2_sub(r, wasm_f64x2_mul(k, wasm_f64x2_splat(kPio2Part2)));
  return wasm_f64x2_sub(r, wasm_f64x2_mul(k, wasm_f64x2_splat(kPio2Part3)));
}

// Joins the low halves of two 4-lane vectors: [a0, a1, b0, b1].
inline v128_t join_low(v128_t a, v128_t b) {
  return wasm_i32x4_shuffle(a, b, 0, 1, 4, 5);
}

// Quadrants of four angles from their two pairs of k.
inline v128_t quadrants(v128_t k0, v128_t k1) {
  return join_low(wasm_i32x4_trunc_sat_f64x2_zero(k0), wasm_i32x4_trunc_sat_f64x2_zero(k1));
}

// (sin r, cos r) -> (sin x, cos x) for x = r + q pi/2: swap when q is odd, negate by the bits.
inline void apply_quadrant(v128_t q, v128_t& s, v128_t& c) {
  const v128_t one = wasm_i32x4_splat(1), two = wasm_i32x4_splat(2);
  const v128_t swap = wasm_i32x4_eq(wasm_v128_and(q, one), one);
  const v128_t s_sign = wasm_i32x4_shl(wasm_v128_and(q, two), 30);
  const v128_t c_sign = wasm_i32x4_shl(wasm_v128_and(wasm_i32x4_add(q, one), two), 30);
  const v128_t sr = s;
  s = wasm_v128_xor(wasm_v128_bitselect(c, sr, swap), s_sign);
  c = wasm_v128_xor(wasm_v128_bitselect(sr, c, swap), c_sign);
}

// Float64 sin and cos of two reduced angles.
inline void sincos_reduced_f64(v128_t r, v128_t& s, v128_t& c) {
  const v128_t z = wasm_f64x2_mul(r, r);
  auto madd = [](v128_t a, v128_t b, double k) {
    return wasm_f64x2_add(wasm_f64x2_splat(k), wasm_f64x2_mul(a, b));
  };
  v128_t ps = madd(z, wasm_f64x2_splat(kS6), kS5);
  ps = madd(z, ps, kS4);
  ps = madd(z, ps, kS3);
  ps = madd(z, ps, kS2);
  ps = madd(z, ps, kS1);
  s = wasm_f64x2_add(r, wasm_f64x2_mul(wasm_f64x2_mul(r, z), ps));
  v128_t pc = madd(z, wasm_f64x2_splat(kC6), kC5);
  pc = madd(z, pc, kC4);
  pc = madd(z, pc, kC3);
  pc = madd(z, pc, kC2);
  pc = madd(z, pc, kC1);
  const v128_t half_z = wasm_f64x2_mul(wasm_f64x2_splat(0.5), z);
  c = wasm_f64x2_sub(wasm_f64x2_splat(1.0),
                     wasm_f64x2_sub(half_z, wasm_f64x2_mul(wasm_f64x2_mul(z, z), pc)));
}

// Float32 sin and cos of four reduced angles.
inline void sincos_reduced_f32(v128_t r, v128_t& s, v128_t& c) {
  const v128_t z = wasm_f32x4_mul(r, r);
  auto madd = [](v128_t a, v128_t b, double k) {
    return wasm_f32x4_add(wasm_f32x4_splat(static_cast<float>(k)), wasm_f32x4_mul(a, b));
  };
  v128_t ps = madd(z, wasm_f32x4_splat(static_cast<float>(kS4)), kS3);
  ps = madd(z, ps, kS2);
  ps = madd(z, ps, kS1);
  s = wasm_f32x4_add(r, wasm_f32x4_mul(wasm_f32x4_mul(r, z), ps));
  v128_t pc = madd(z, wasm_f32x4_splat(static_cast<float>(kC4)), kC3);
  pc = madd(z, pc, kC2);
  pc = madd(z, pc, kC1);
  const v128_t half_z = wasm_f32x4_mul(wasm_f32x4_splat(0.5f), z);
  c = wasm_f32x4_sub(wasm_f32x4_splat(1.0f),
                     wasm_f32x4_sub(half_z, wasm_f32x4_mul(wasm_f32x4_mul(z, z), pc)));
}

template <bool Add>
inline void put4(float* out, v128_t v, v128_t scale) {
  if constexpr (Add) v = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(out), scale), v);
  wasm_v128_store(out, v);
}

// Fills (s, c) for frequencies i..i+3 via group(i, s, c) and writes every group into the row:
// whole groups while both columns exist (interleaving by shuffles), then the scalar tail.
template <bool Add, bool Interleaved, class Group>
inline void write_row(const RowLayout& L, float scale, float* out, Group group) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  v128_t s, c;
  std::int64_t i = 0;
  for (; i + 4 <= L.cosines; i += 4) {
    group(i, s, c);
    if constexpr (Interleaved) {
      put4<Add>(out + 2 * i, wasm_i32x4_shuffle(s, c, 0, 4, 1, 5), vscale);
      put4<Add>(out + 2 * i + 4, wasm_i32x4_shuffle(s, c, 2, 6, 3, 7), vscale);
    } else {
      put4<Add>(out + i, s, vscale);
      put4<Add>(out + L.sines + i, c, vscale);
    }
  }
  alignas(16) float st[4], ct[4];
  if (i < L.sines) {
    group(i, s, c);
    wasm_v128_store(st, s);
    wasm_v128_store(ct, c);
  }
  put_tail<Add>(L, i, st, ct, scale, out);
}

template <class Group>
inline void dispatch(const RowLayout& L, bool add, float scale, float* out, Group group) {
  if (add) {
    if (L.interleaved) {
      write_row<true, true>(L, scale, out, group);
    } else {
      write_row<true, false>(L, scale, out, group);
    }
  } else if (L.interleaved) {
    write_row<false, true>(L, scale, out, group);
  } else {
    write_row<false, false>(L, scale, out, group);
  }
}

// See scalar::anchors.
inline void anchors(const double* w, std::int64_t n, double p, float* s, float* c) {
  const v128_t vp = wasm_f64x2_splat(p);
  for (std::int64_t i = 0; i < n; i += 4) {
    v128_t k0, k1, s0, c0, s1, c1;
    sincos_reduced_f64(reduce_pio2(wasm_f64x2_mul(vp, wasm_v128_load(w + i)), k0), s0, c0);
    sincos_reduced_f64(reduce_pio2(wasm_f64x2_mul(vp, wasm_v128_load(w + i + 2)), k1), s1, c1);
    v128_t sv = join_low(wasm_f32x4_demote_f64x2_zero(s0), wasm_f32x4_demote_f64x2_zero(s1));
    v128_t cv = join_low(wasm_f32x4_demote_f64x2_zero(c0), wasm_f32x4_demote_f64x2_zero(c1));
    apply_quadrant(quadrants(k0, k1), sv, cv);
    wasm_v128_store(s + i, sv);
    wasm_v128_store(c + i, cv);
  }
}

// See scalar::direct_row.
inline void direct_row(const RowLayout& L, const double* w, double p, bool add, float scale,
                       float* out) {
  const v128_t vp = wasm_f64x2_splat(p);
  dispatch(L, add, scale, out, [&](std::int64_t i, v128_t& s, v128_t& c) {
    v128_t k0, k1;
    const v128_t r0 = reduce_pio2(wasm_f64x2_mul(vp, wasm_v128_load(w + i)), k0);
    const v128_t r1 = reduce_pio2(wasm_f64x2_mul(vp, wasm_v128_load(w + i + 2)), k1);
    sincos_reduced_f32(join_low(wasm_f32x4_demote_f64x2_zero(r0), wasm_f32x4_demote_f64x2_zero(r1)),
                       s, c);
    apply_quadrant(quadrants(k0, k1), s, c);
  });
}

// See scalar::rotate_row.
inline void rotate_row(const RowLayout& L, const float* sa, const float* ca, const float* sj,
                       const float* cj, bool add, float scale, float* out) {
  dispatch(L, add, scale, out, [&](std::int64_t i, v128_t& s, v128_t& c) {
    const v128_t a_s = wasm_v128_load(sa + i), a_c = wasm_v128_load(ca + i);
    const v128_t j_s = wasm_v128_load(sj + i), j_c = wasm_v128_load(cj + i);
    const v128_t one = wasm_f32x4_splat(1.0f), minus_one = wasm_f32x4_splat(-1.0f);
    s = wasm_f32x4_add(wasm_f32x4_mul(a_s, j_c), wasm_f32x4_mul(a_c, j_s));
    c = wasm_f32x4_sub(wasm_f32x4_mul(a_c, j_c), wasm_f32x4_mul(a_s, j_s));
    // As scalar::rotate_row's clamp_unit: one ulp above 1 is possible. pmin/pmax are single
    // minps/maxps instructions (min/max need several for their NaN rules; no NaN reaches here).
    s = wasm_f32x4_pmin(one, wasm_f32x4_pmax(minus_one, s));
    c = wasm_f32x4_pmin(one, wasm_f32x4_pmax(minus_one, c));
  });
}

}  // namespace posenc::detail::simd
