// Internal: the wasm SIMD128 kernels, four frequencies per vector; same contract as
// posenc::detail::scalar in kernels.hpp and bit-identical results for anchors and rotate_rows
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

#include "sincos/kernel_math.hpp"

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

// Fills (s, c) for frequencies i..i+3 via group(i, s, c) and writes each group with
// put_group(i, s, c) while both columns exist, then the scalar tail.
template <class PutGroup, class Group>
inline void write_row_with(const RowLayout& L, bool add, float scale, float* out,
                           PutGroup put_group, Group group) {
  v128_t s, c;
  std::int64_t i = 0;
  for (; i + 4 <= L.cosines; i += 4) {
    group(i, s, c);
    put_group(i, s, c);
  }
  alignas(16) float st[4], ct[4];
  if (i < L.sines) {
    group(i, s, c);
    wasm_v128_store(st, s);
    wasm_v128_store(ct, c);
  }
  if (add) {
    put_tail<true>(L, i, st, ct, scale, out);
  } else {
    put_tail<false>(L, i, st, ct, scale, out);
  }
}

// Four f32 lane masks from the 64-bit lane masks of two f64x2 comparisons.
inline v128_t join_masks(v128_t m0, v128_t m1) {
  return wasm_i32x4_shuffle(m0, m1, 0, 2, 4, 6);
}

// Lanes 0, 1 (low64) and 2, 3 (high64) of a f32x4 as float64.
inline v128_t low64(v128_t v) {
  return wasm_f64x2_promote_low_f32x4(v);
}
inline v128_t high64(v128_t v) {
  return wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 2, 3));
}

// See detail::above_unit: a lane mask.
inline v128_t above_unit(v128_t s, v128_t c) {
  const v128_t as = wasm_f32x4_abs(s), ac = wasm_f32x4_abs(c);
  const v128_t big = wasm_f32x4_pmax(as, ac), small = wasm_f32x4_pmin(as, ac);
  auto half = [](v128_t m, v128_t n) {
    return wasm_f64x2_gt(wasm_f64x2_mul(n, n),
                         wasm_f64x2_sub(wasm_f64x2_splat(1.0), wasm_f64x2_mul(m, m)));
  };
  return join_masks(half(low64(big), low64(small)), half(high64(big), high64(small)));
}

// Whether |v| (float32 lanes) exceeds |d0|, |d1| (its float64 sources): rounded away from zero.
inline v128_t away(v128_t v, v128_t d0, v128_t d1) {
  return join_masks(wasm_f64x2_gt(wasm_f64x2_abs(low64(v)), wasm_f64x2_abs(d0)),
                    wasm_f64x2_gt(wasm_f64x2_abs(high64(v)), wasm_f64x2_abs(d1)));
}

// See detail::unit_pair: s, c are the float32 roundings of (s0, s1), (c0, c1). A mask lane is -1,
// so adding it to a lane's bits steps that float toward zero.
inline void unit_pairs(v128_t s0, v128_t s1, v128_t c0, v128_t c1, v128_t& s, v128_t& c) {
  const v128_t away_s = away(s, s0, s1), away_c = away(c, c0, c1);
  const v128_t larger_s = wasm_f32x4_ge(wasm_f32x4_abs(s), wasm_f32x4_abs(c));
  const v128_t first_s = wasm_v128_bitselect(away_s, larger_s, wasm_v128_xor(away_s, away_c));
  const v128_t over = above_unit(s, c);
  s = wasm_i32x4_add(s, wasm_v128_and(over, first_s));
  c = wasm_i32x4_add(c, wasm_v128_andnot(over, first_s));
  const v128_t again = above_unit(s, c);
  s = wasm_i32x4_add(s, wasm_v128_andnot(again, first_s));
  c = wasm_i32x4_add(c, wasm_v128_and(again, first_s));
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
    unit_pairs(s0, s1, c0, c1, sv, cv);
    apply_quadrant(quadrants(k0, k1), sv, cv);
    wasm_v128_store(s + i, sv);
    wasm_v128_store(c + i, cv);
  }
}

// See scalar::direct_row. Off the bulk path (explicit positions, a few rows without a cache), so
// one instantiation with the layout and add decided per group keeps the module small: the
// polynomial dominates the row anyway.
inline void direct_row(const RowLayout& L, const double* w, double p, bool add, float scale,
                       float* out) {
  const v128_t vp = wasm_f64x2_splat(p), vscale = wasm_f32x4_splat(scale);
  auto put = [&](float* at, v128_t v) {
    if (add) {
      put4<true>(at, v, vscale);
    } else {
      put4<false>(at, v, vscale);
    }
  };
  auto row = [&](std::int64_t i, v128_t s, v128_t c) {
    if (L.interleaved) {
      put(out + 2 * i, wasm_i32x4_shuffle(s, c, 0, 4, 1, 5));
      put(out + 2 * i + 4, wasm_i32x4_shuffle(s, c, 2, 6, 3, 7));
    } else {
      put(out + i, s);
      put(out + L.sines + i, c);
    }
  };
  write_row_with(L, add, scale, out, row, [&](std::int64_t i, v128_t& s, v128_t& c) {
    v128_t k0, k1;
    const v128_t r0 = reduce_pio2(wasm_f64x2_mul(vp, wasm_v128_load(w + i)), k0);
    const v128_t r1 = reduce_pio2(wasm_f64x2_mul(vp, wasm_v128_load(w + i + 2)), k1);
    sincos_reduced_f32(join_low(wasm_f32x4_demote_f64x2_zero(r0), wasm_f32x4_demote_f64x2_zero(r1)),
                       s, c);
    apply_quadrant(quadrants(k0, k1), s, c);
  });
}

// Writes two rows from groups of four frequencies: group(i, sp, cp, sm, cm) fills the sines and
// cosines of both (interleaving by shuffles), then the scalar tails.
template <bool Add, bool Interleaved, class Group>
inline void write_rows(const RowLayout& L, float scale, float* plus, float* minus, Group group) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  v128_t sp, cp, sm, cm;
  std::int64_t i = 0;
  for (; i + 4 <= L.cosines; i += 4) {
    group(i, sp, cp, sm, cm);
    if constexpr (Interleaved) {
      put4<Add>(plus + 2 * i, wasm_i32x4_shuffle(sp, cp, 0, 4, 1, 5), vscale);
      put4<Add>(plus + 2 * i + 4, wasm_i32x4_shuffle(sp, cp, 2, 6, 3, 7), vscale);
      put4<Add>(minus + 2 * i, wasm_i32x4_shuffle(sm, cm, 0, 4, 1, 5), vscale);
      put4<Add>(minus + 2 * i + 4, wasm_i32x4_shuffle(sm, cm, 2, 6, 3, 7), vscale);
    } else {
      put4<Add>(plus + i, sp, vscale);
      put4<Add>(plus + L.sines + i, cp, vscale);
      put4<Add>(minus + i, sm, vscale);
      put4<Add>(minus + L.sines + i, cm, vscale);
    }
  }
  alignas(16) float t[4][4];
  if (i < L.sines) {
    group(i, sp, cp, sm, cm);
    wasm_v128_store(t[0], sp);
    wasm_v128_store(t[1], cp);
    wasm_v128_store(t[2], sm);
    wasm_v128_store(t[3], cm);
  }
  put_tail<Add>(L, i, t[0], t[1], scale, plus);
  put_tail<Add>(L, i, t[2], t[3], scale, minus);
}

// See scalar::rotate_rows: the four products are shared by the two rows.
inline void rotate_rows(const RowLayout& L, const float* sa, const float* ca, const float* sd,
                        const float* cd, bool add, float scale, float* plus, float* minus) {
  auto group = [=](std::int64_t i, v128_t& sp, v128_t& cp, v128_t& sm, v128_t& cm) {
    const v128_t a_s = wasm_v128_load(sa + i), a_c = wasm_v128_load(ca + i);
    const v128_t d_s = wasm_v128_load(sd + i), d_c = wasm_v128_load(cd + i);
    const v128_t x = wasm_f32x4_mul(a_s, d_c), y = wasm_f32x4_mul(a_c, d_s);
    const v128_t z = wasm_f32x4_mul(a_c, d_c), v = wasm_f32x4_mul(a_s, d_s);
    sp = wasm_f32x4_add(x, y);
    cp = wasm_f32x4_sub(z, v);
    sm = wasm_f32x4_sub(x, y);
    cm = wasm_f32x4_add(z, v);
  };
  if (add) {
    if (L.interleaved) {
      write_rows<true, true>(L, scale, plus, minus, group);
    } else {
      write_rows<true, false>(L, scale, plus, minus, group);
    }
  } else if (L.interleaved) {
    write_rows<false, true>(L, scale, plus, minus, group);
  } else {
    write_rows<false, false>(L, scale, plus, minus, group);
  }
}

}  // namespace posenc::detail::simd
