// Internal: the wasm SIMD128 kernels, four frequencies per step (two f64x2 halves); same contract
// as posenc::detail::scalar in kernels.hpp and bit-identical results: the same float64 operations
// in the same order, the same hard-case test, and rounded_exact() for the hard cases. (Quadrants
// are applied after rounding here, before it in the scalar code: rounding to nearest and the
// test are symmetric under negation, so the values are the same.) Header-only so the tests can also
// compile it natively through simde (define POSENC_SIMD_VIA_SIMDE before including it).
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

inline v128_t splat(double x) {
  return wasm_f64x2_splat(x);
}
inline v128_t add(v128_t a, v128_t b) {
  return wasm_f64x2_add(a, b);
}
inline v128_t sub(v128_t a, v128_t b) {
  return wasm_f64x2_sub(a, b);
}
inline v128_t mul(v128_t a, v128_t b) {
  return wasm_f64x2_mul(a, b);
}

// Joins the low halves of two 4-lane vectors: [a0, a1, b0, b1].
inline v128_t join_low(v128_t a, v128_t b) {
  return wasm_i32x4_shuffle(a, b, 0, 1, 4, 5);
}

// x = p w exactly for frequencies i, i + 1 (see detail::two_product; p = ph + pl split).
inline void two_product(v128_t p, v128_t ph, v128_t pl, const SplitFrequencies& F, std::int64_t i,
                        v128_t& xh, v128_t& xl) {
  const v128_t w = wasm_v128_load(F.w + i);
  const v128_t t = mul(w, splat(kSplit));
  const v128_t wh = sub(t, sub(t, w)), wl = sub(w, wh);  // detail::split
  xh = mul(p, w);
  xl = add(add(add(sub(mul(ph, wh), xh), mul(ph, wl)), mul(pl, wh)), mul(pl, wl));
  if (F.lo != nullptr) xl = add(xl, mul(p, wasm_v128_load(F.lo + i)));
}

// The same with the stored low halves and tails (F.wl and F.lo both given): the same values.
inline void two_product_stored(v128_t p, v128_t ph, v128_t pl, const SplitFrequencies& F,
                               std::int64_t i, v128_t& xh, v128_t& xl) {
  const v128_t w = wasm_v128_load(F.w + i), wl = wasm_v128_load(F.wl + i);
  const v128_t wh = sub(w, wl);  // exact: w = wh + wl
  xh = mul(p, w);
  xl = add(add(add(add(sub(mul(ph, wh), xh), mul(ph, wl)), mul(pl, wh)), mul(pl, wl)),
           mul(p, wasm_v128_load(F.lo + i)));
}

// See detail::reduce_pio2: returns k (float64 integers), sets r = rh + rl.
inline v128_t reduce_pio2(v128_t xh, v128_t xl, v128_t& rh, v128_t& rl) {
  const v128_t k = wasm_f64x2_nearest(mul(xh, splat(kTwoOverPi)));
  const v128_t a = sub(xh, mul(k, splat(kPio2C1)));
  const v128_t b = mul(k, splat(kNegPio2C2));
  const v128_t s = add(a, b);
  v128_t bb = sub(s, a);
  v128_t e = add(sub(a, sub(s, bb)), sub(b, bb));
  const v128_t c = mul(k, splat(kNegPio2C3));
  const v128_t s2 = add(s, c);
  bb = sub(s2, s);
  e = add(e, add(sub(s, sub(s2, bb)), sub(c, bb)));
  const v128_t tail = add(e, sub(xl, mul(k, splat(kPio2C4))));
  rh = add(s2, tail);
  rl = sub(tail, sub(rh, s2));
  return k;
}

// See detail::reduce_pio2_lite: returns k, sets r.
inline v128_t reduce_pio2_lite(v128_t xh, v128_t xl, v128_t& r) {
  const v128_t k = wasm_f64x2_nearest(mul(xh, splat(kTwoOverPi)));
  r = add(add(add(sub(xh, mul(k, splat(kPio2C1))), mul(k, splat(kNegPio2C2))),
              mul(k, splat(kNegPio2C3))),
          sub(xl, mul(k, splat(kPio2C4))));
  return k;
}

// See detail::sincos_reduced_lite.
inline void sincos_reduced_lite(v128_t r, v128_t& s, v128_t& c) {
  const v128_t z = mul(r, r);
  auto madd = [](v128_t a, v128_t b, double k) { return add(splat(k), mul(a, b)); };
  v128_t ps = madd(z, splat(kS6), kS5);
  ps = madd(z, ps, kS4);
  ps = madd(z, ps, kS3);
  ps = madd(z, ps, kS2);
  ps = madd(z, ps, kS1);
  s = add(r, mul(mul(r, z), ps));
  v128_t pc = madd(z, splat(kC6), kC5);
  pc = madd(z, pc, kC4);
  pc = madd(z, pc, kC3);
  pc = madd(z, pc, kC2);
  pc = madd(z, pc, kC1);
  c = sub(splat(1.0), sub(mul(splat(0.5), z), mul(mul(z, z), pc)));
}

// See detail::sincos_reduced_f64 (same expressions, same order).
inline void sincos_reduced_f64(v128_t rh, v128_t rl, v128_t& s, v128_t& c) {
  const v128_t z = mul(rh, rh);
  auto madd = [](v128_t a, v128_t b, double k) { return add(splat(k), mul(a, b)); };
  v128_t ps = madd(z, splat(kS6), kS5);
  ps = madd(z, ps, kS4);
  ps = madd(z, ps, kS3);
  ps = madd(z, ps, kS2);
  ps = madd(z, ps, kS1);
  s = add(rh, add(mul(mul(rh, z), ps), rl));
  v128_t pc = madd(z, splat(kC6), kC5);
  pc = madd(z, pc, kC4);
  pc = madd(z, pc, kC3);
  pc = madd(z, pc, kC2);
  pc = madd(z, pc, kC1);
  c = sub(splat(1.0), sub(mul(splat(0.5), z), sub(mul(mul(z, z), pc), mul(rh, rl))));
}

// sin and cos (before the quadrant) of p w for frequencies i, i + 1; returns k.
inline v128_t sincos_pair(v128_t p, v128_t ph, v128_t pl, const SplitFrequencies& F, std::int64_t i,
                          v128_t& s, v128_t& c) {
  v128_t xh, xl, rh, rl;
  two_product(p, ph, pl, F, i, xh, xl);
  const v128_t k = reduce_pio2(xh, xl, rh, rl);
  sincos_reduced_f64(rh, rl, s, c);
  return k;
}

// The same with the lite reduction (direct rows: F.wl and F.lo given).
inline v128_t sincos_pair_lite(v128_t p, v128_t ph, v128_t pl, const SplitFrequencies& F,
                               std::int64_t i, v128_t& s, v128_t& c) {
  v128_t xh, xl, r;
  two_product_stored(p, ph, pl, F, i, xh, xl);
  const v128_t k = reduce_pio2_lite(xh, xl, r);
  sincos_reduced_lite(r, s, c);
  return k;
}

// Quadrants of four angles from their two pairs of k.
inline v128_t quadrants(v128_t k0, v128_t k1) {
  return join_low(wasm_i32x4_trunc_sat_f64x2_zero(k0), wasm_i32x4_trunc_sat_f64x2_zero(k1));
}

// (sin r, cos r) -> (sin x, cos x) for x = r + q pi/2, four float32 lanes: swap when q is odd,
// negate by the bits. The hard-case masks hs, hc follow their values.
inline void apply_quadrant(v128_t q, v128_t& s, v128_t& c, v128_t& hs, v128_t& hc) {
  const v128_t one = wasm_i32x4_splat(1), two = wasm_i32x4_splat(2);
  const v128_t swap = wasm_i32x4_eq(wasm_v128_and(q, one), one);
  const v128_t s_sign = wasm_i32x4_shl(wasm_v128_and(q, two), 30);
  const v128_t c_sign = wasm_i32x4_shl(wasm_v128_and(wasm_i32x4_add(q, one), two), 30);
  const v128_t sr = s, hsr = hs;
  s = wasm_v128_xor(wasm_v128_bitselect(c, sr, swap), s_sign);
  c = wasm_v128_xor(wasm_v128_bitselect(sr, c, swap), c_sign);
  hs = wasm_v128_bitselect(hc, hsr, swap);
  hc = wasm_v128_bitselect(hsr, hc, swap);
}

// The same on two float64 lanes with their k.
inline void apply_quadrant_f64(v128_t k, v128_t& s, v128_t& c) {
  const v128_t q = wasm_i64x2_extend_low_i32x4(wasm_i32x4_trunc_sat_f64x2_zero(k));
  const v128_t one = wasm_i64x2_splat(1), two = wasm_i64x2_splat(2);
  const v128_t swap = wasm_i64x2_eq(wasm_v128_and(q, one), one);
  const v128_t s_sign = wasm_i64x2_shl(wasm_v128_and(q, two), 62);
  const v128_t c_sign = wasm_i64x2_shl(wasm_v128_and(wasm_i64x2_add(q, one), two), 62);
  const v128_t sr = s;
  s = wasm_v128_xor(wasm_v128_bitselect(c, sr, swap), s_sign);
  c = wasm_v128_xor(wasm_v128_bitselect(sr, c, swap), c_sign);
}

// Rounds two f64x2 (lanes 0, 1 and 2, 3) to one f32x4; hard lanes (detail::round_checked) are
// nonzero in `hard`.
inline v128_t round4(v128_t v0, v128_t v1, v128_t& hard) {
  const v128_t e = splat(kHardMargin);
  const v128_t lo =
      join_low(wasm_f32x4_demote_f64x2_zero(sub(v0, e)), wasm_f32x4_demote_f64x2_zero(sub(v1, e)));
  const v128_t hi =
      join_low(wasm_f32x4_demote_f64x2_zero(add(v0, e)), wasm_f32x4_demote_f64x2_zero(add(v1, e)));
  hard = wasm_v128_xor(lo, hi);
  return lo;
}

// Replaces the hard lanes of v (frequencies i..i+3 of F at position p) by rounded_exact. Rare: not
// inlined. noexcept (as fix_group and rounded_exact): in a build with exceptions (the wasm tests),
// a call that may throw from a frame with cleanups goes through a JavaScript invoke_ wrapper, and
// v128 values cannot cross into JavaScript (a TypeError at the first hard case).
[[gnu::noinline]] inline v128_t fix_hard(v128_t v, v128_t hard, double p, const SplitFrequencies& F,
                                         std::int64_t i, bool cosine) noexcept {
  alignas(16) float values[4];
  alignas(16) std::uint32_t flags[4];
  wasm_v128_store(values, v);
  wasm_v128_store(flags, hard);
  for (int k = 0; k < 4; ++k) {
    if (flags[k] != 0) values[k] = rounded_exact(p, F.w[i + k], F.low(i + k), cosine);
  }
  return wasm_v128_load(values);
}

// See scalar::sincos_row. Not inlined: once per block, and called from two places (module size).
[[gnu::noinline]] inline void sincos_row(const SplitFrequencies& F, std::int64_t n, double p,
                                         double* s, double* c) {
  double ph, pl;
  split(p, ph, pl);
  const v128_t vp = splat(p), vph = splat(ph), vpl = splat(pl);
  for (std::int64_t i = 0; i < n; i += 2) {
    v128_t sv, cv;
    const v128_t k = sincos_pair(vp, vph, vpl, F, i, sv, cv);
    apply_quadrant_f64(k, sv, cv);
    wasm_v128_store(s + i, sv);
    wasm_v128_store(c + i, cv);
  }
}

template <bool Add>
inline void put4(float* out, v128_t v, v128_t scale) {
  if constexpr (Add) v = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(out), scale), v);
  wasm_v128_store(out, v);
}

// Fills (s, c) for frequencies i..i+3 via group(i, s, c) and writes each group into the row
// (interleaving by shuffles; the layout and add decided per group, one instantiation) while both
// columns exist, then the scalar tail.
template <class Group>
inline void write_row_with(const RowLayout& L, bool add, float scale, float* out, Group group) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  auto put = [&](float* at, v128_t v) {
    if (add) {
      put4<true>(at, v, vscale);
    } else {
      put4<false>(at, v, vscale);
    }
  };
  auto put_group = [&](std::int64_t i, v128_t s, v128_t c) {
    if (L.interleaved) {
      put(out + 2 * i, wasm_i32x4_shuffle(s, c, 0, 4, 1, 5));
      put(out + 2 * i + 4, wasm_i32x4_shuffle(s, c, 2, 6, 3, 7));
    } else {
      put(out + i, s);
      put(out + L.sines + i, c);
    }
  };
  // One call site of group (inlined once: module size): whole groups, then the tail group.
  v128_t s, c;
  std::int64_t i = 0;
  alignas(16) float st[4], ct[4];
  for (; i < L.sines; i += 4) {
    group(i, s, c);
    if (i + 4 > L.cosines) {
      wasm_v128_store(st, s);
      wasm_v128_store(ct, c);
      break;
    }
    put_group(i, s, c);
  }
  if (add) {
    put_tail<true>(L, i, st, ct, scale, out);
  } else {
    put_tail<false>(L, i, st, ct, scale, out);
  }
}

// See scalar::direct_row. Off the bulk path (explicit positions, rows far from cached anchors),
// so one instantiation with the layout and add decided per group keeps the module small: the
// polynomial dominates the row anyway.
[[gnu::noinline]] inline void direct_row(const RowLayout& L, const SplitFrequencies& F, double p,
                                         bool add, float scale, float* out) {
  double ph, pl;
  split(p, ph, pl);
  const v128_t vp = splat(p), vph = splat(ph), vpl = splat(pl);
  write_row_with(
      L, add, scale,
      out, [&](std::int64_t i, v128_t & s, v128_t & c) __attribute__((always_inline)) {
        v128_t s0, c0, s1, c1, hs, hc;
        const v128_t k0 = sincos_pair_lite(vp, vph, vpl, F, i, s0, c0);
        const v128_t k1 = sincos_pair_lite(vp, vph, vpl, F, i + 2, s1, c1);
        s = round4(s0, s1, hs);
        c = round4(c0, c1, hc);
        apply_quadrant(quadrants(k0, k1), s, c, hs, hc);
        if (wasm_v128_any_true(wasm_v128_or(hs, hc))) {
          s = fix_hard(s, hs, p, F, i, false);
          c = fix_hard(c, hc, p, F, i, true);
        }
      });
}

// Writes two rows from groups of four frequencies: group(i, sp, cp, sm, cm) fills the sines and
// cosines of both (interleaving by shuffles), then the scalar tails.
template <class Group>
inline void write_rows(const RowLayout& L, bool add, float scale, float* plus, float* minus,
                       Group group) {
  // One call site of group, one instantiation (module size): the layout and add are decided per
  // group (well predicted branches); whole groups, then the tail group.
  const v128_t vscale = wasm_f32x4_splat(scale);
  auto put4 = [&](float* out, v128_t v) {
    if (add) v = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(out), vscale), v);
    wasm_v128_store(out, v);
  };
  v128_t sp, cp, sm, cm;
  std::int64_t i = 0;
  alignas(16) float t[4][4];
  for (; i < L.sines; i += 4) {
    group(i, sp, cp, sm, cm);
    if (i + 4 > L.cosines) {
      wasm_v128_store(t[0], sp);
      wasm_v128_store(t[1], cp);
      wasm_v128_store(t[2], sm);
      wasm_v128_store(t[3], cm);
      break;
    }
    if (L.interleaved) {  // decided per group (well predicted): half the instantiations
      put4(plus + 2 * i, wasm_i32x4_shuffle(sp, cp, 0, 4, 1, 5));
      put4(plus + 2 * i + 4, wasm_i32x4_shuffle(sp, cp, 2, 6, 3, 7));
      put4(minus + 2 * i, wasm_i32x4_shuffle(sm, cm, 0, 4, 1, 5));
      put4(minus + 2 * i + 4, wasm_i32x4_shuffle(sm, cm, 2, 6, 3, 7));
    } else {
      put4(plus + i, sp);
      put4(plus + L.sines + i, cp);
      put4(minus + i, sm);
      put4(minus + L.sines + i, cm);
    }
  }
  if (add) {
    put_tail<true>(L, i, t[0], t[1], scale, plus);
    put_tail<true>(L, i, t[2], t[3], scale, minus);
  } else {
    put_tail<false>(L, i, t[0], t[1], scale, plus);
    put_tail<false>(L, i, t[2], t[3], scale, minus);
  }
}

// The hard lanes of one group of rotate_rows, recomputed (rare: not inlined).
[[gnu::noinline]] inline void fix_group(const SplitFrequencies& F, std::int64_t i, double pp,
                                        double pm, v128_t& sp, v128_t& cp, v128_t& sm, v128_t& cm,
                                        v128_t hsp, v128_t hcp, v128_t hsm, v128_t hcm) noexcept {
  sp = fix_hard(sp, hsp, pp, F, i, false);
  cp = fix_hard(cp, hcp, pp, F, i, true);
  sm = fix_hard(sm, hsm, pm, F, i, false);
  cm = fix_hard(cm, hcm, pm, F, i, true);
}

// See scalar::rotate_rows: the four products are shared by the two rows.
inline void rotate_rows(const RowLayout& L, const SplitFrequencies& F, const double* sa,
                        const double* ca, const double* sd, const double* cd, double a, double d,
                        bool add_to, float scale, float* plus, float* minus) {
  const double pp = a + d, pm = a - d;
  // The closure holds a pointer to F, not a copy: the hot loop keeps its registers for the rows.
  const SplitFrequencies* frequencies = &F;
  auto group = [=](std::int64_t i, v128_t& sp, v128_t& cp, v128_t& sm, v128_t& cm) {
    v128_t x[2], y[2], z[2], v[2];
    for (int h = 0; h < 2; ++h) {
      const std::int64_t j = i + 2 * h;
      const v128_t a_s = wasm_v128_load(sa + j), a_c = wasm_v128_load(ca + j);
      const v128_t d_s = wasm_v128_load(sd + j), d_c = wasm_v128_load(cd + j);
      x[h] = mul(a_s, d_c);
      y[h] = mul(a_c, d_s);
      z[h] = mul(a_c, d_c);
      v[h] = mul(a_s, d_s);
    }
    v128_t hsp, hcp, hsm, hcm;
    sp = round4(add(x[0], y[0]), add(x[1], y[1]), hsp);
    cp = round4(sub(z[0], v[0]), sub(z[1], v[1]), hcp);
    sm = round4(sub(x[0], y[0]), sub(x[1], y[1]), hsm);
    cm = round4(add(z[0], v[0]), add(z[1], v[1]), hcm);
    if (wasm_v128_any_true(wasm_v128_or(wasm_v128_or(hsp, hcp), wasm_v128_or(hsm, hcm)))) {
      fix_group(*frequencies, i, pp, pm, sp, cp, sm, cm, hsp, hcp, hsm, hcm);
    }
  };
  write_rows(L, add_to, scale, plus, minus, group);
}

// See scalar::rotate_row. One instantiation, the layout and add decided per group (as direct_row).
inline void rotate_row(const RowLayout& L, const SplitFrequencies& F, const double* sa,
                       const double* ca, const double* sd, const double* cd, double a, double d,
                       bool minus, bool add_to, float scale, float* out) {
  const double p = minus ? a - d : a + d;
  // sin(a +- d) = x +- y, cos(a +- d) = z -+ v: the sign of y and v flips for the minus row.
  const v128_t flip = minus ? wasm_f64x2_splat(-0.0) : wasm_f64x2_splat(0.0);
  write_row_with(
      L, add_to, scale,
      out, [&](std::int64_t i, v128_t & s, v128_t & c) __attribute__((always_inline)) {
        v128_t sv[2], cv[2];
        for (int h = 0; h < 2; ++h) {
          const std::int64_t j = i + 2 * h;
          const v128_t a_s = wasm_v128_load(sa + j), a_c = wasm_v128_load(ca + j);
          const v128_t d_s = wasm_v128_load(sd + j), d_c = wasm_v128_load(cd + j);
          sv[h] = add(mul(a_s, d_c), wasm_v128_xor(mul(a_c, d_s), flip));
          cv[h] = sub(mul(a_c, d_c), wasm_v128_xor(mul(a_s, d_s), flip));
        }
        v128_t hs, hc;
        s = round4(sv[0], sv[1], hs);
        c = round4(cv[0], cv[1], hc);
        if (wasm_v128_any_true(wasm_v128_or(hs, hc))) {
          s = fix_hard(s, hs, p, F, i, false);
          c = fix_hard(c, hc, p, F, i, true);
        }
      });
}

}  // namespace posenc::detail::simd
