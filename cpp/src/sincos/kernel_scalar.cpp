// The portable kernels (kernels.hpp): plain loops over frequencies, four at a time so the
// structure (and the tail handling) matches the SIMD kernels.
#include "sincos/kernels.hpp"

namespace posenc::detail::scalar {

namespace {

template <bool Add, bool Interleaved>
inline void put_group(const RowLayout& L, std::int64_t i, const float* s, const float* c,
                      float scale, float* out) {
  for (int k = 0; k < 4; ++k) {
    if constexpr (Interleaved) {
      put<Add>(out + 2 * (i + k), s[k], scale);
      put<Add>(out + 2 * (i + k) + 1, c[k], scale);
    } else {
      put<Add>(out + i + k, s[k], scale);
      put<Add>(out + L.sines + i + k, c[k], scale);
    }
  }
}

// Calls group(i, s, c) to fill 4 sines and cosines of frequencies i..i+3, for every group, and
// writes them: whole groups while both columns exist, then the tail and the zero column.
template <bool Add, bool Interleaved, class Group>
inline void write_row(const RowLayout& L, float scale, float* out, Group group) {
  float s[4], c[4];
  std::int64_t i = 0;
  for (; i + 4 <= L.cosines; i += 4) {
    group(i, s, c);
    put_group<Add, Interleaved>(L, i, s, c, scale, out);
  }
  if (i < L.sines) group(i, s, c);
  put_tail<Add>(L, i, s, c, scale, out);
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

}  // namespace

void sincos_row(const SplitFrequencies& F, std::int64_t n, double p, double* s, double* c) {
  double ph, pl;
  split(p, ph, pl);
  for (std::int64_t i = 0; i < n; ++i) {
    double wh, wl;
    split(F.w[i], wh, wl);
    sincos_f64(p, ph, pl, F.w[i], wh, wl, F.low(i), s[i], c[i]);
  }
}

void direct_row(const RowLayout& L, const SplitFrequencies& F, double p, bool add, float scale,
                float* out) {
  double ph, pl;
  split(p, ph, pl);
  dispatch(L, add, scale, out, [&](std::int64_t i, float* s, float* c) {
    for (int k = 0; k < 4; ++k) {
      double sv, cv, wh, wl;
      const double w = F.w[i + k], wlo = F.low(i + k);
      split(w, wh, wl);
      sincos_f64_lite(p, ph, pl, w, wh, wl, wlo, sv, cv);
      s[k] = rounded_at(sv, p, F, i + k, false);
      c[k] = rounded_at(cv, p, F, i + k, true);
    }
  });
}

void rotate_rows(const RowLayout& L, const SplitFrequencies& F, const double* sa, const double* ca,
                 const double* sd, const double* cd, double a, double d, bool add, float scale,
                 float* plus, float* minus) {
  // x = sa cd, y = ca sd, z = ca cd, v = sa sd: PE(a + d) = (x + y, z - v), PE(a - d) = (x - y,
  // z + v). Written as two passes; the SIMD kernel shares the products (same values).
  const double pp = a + d, pm = a - d;
  dispatch(L, add, scale, plus, [&](std::int64_t i, float* s, float* c) {
    for (int k = 0; k < 4; ++k) {
      const std::int64_t j = i + k;
      s[k] = rounded_at(sa[j] * cd[j] + ca[j] * sd[j], pp, F, j, false);
      c[k] = rounded_at(ca[j] * cd[j] - sa[j] * sd[j], pp, F, j, true);
    }
  });
  dispatch(L, add, scale, minus, [&](std::int64_t i, float* s, float* c) {
    for (int k = 0; k < 4; ++k) {
      const std::int64_t j = i + k;
      s[k] = rounded_at(sa[j] * cd[j] - ca[j] * sd[j], pm, F, j, false);
      c[k] = rounded_at(ca[j] * cd[j] + sa[j] * sd[j], pm, F, j, true);
    }
  });
}

void rotate_row(const RowLayout& L, const SplitFrequencies& F, const double* sa, const double* ca,
                const double* sd, const double* cd, double a, double d, bool minus, bool add,
                float scale, float* out) {
  const double p = minus ? a - d : a + d;
  // Inlined by force: left to itself, the inliner may call the group as a function from each of
  // dispatch's eight sites (the wasm baseline build's one-row decoding step measured 1.2 to 1.3x).
  dispatch(
      L, add, scale, out, [&](std::int64_t i, float* s, float* c) __attribute__((always_inline)) {
        for (int k = 0; k < 4; ++k) {
          const std::int64_t j = i + k;
          const double x = sa[j] * cd[j], y = ca[j] * sd[j], z = ca[j] * cd[j], v = sa[j] * sd[j];
          s[k] = rounded_at(minus ? x - y : x + y, p, F, j, false);
          c[k] = rounded_at(minus ? z + v : z - v, p, F, j, true);
        }
      });
}

}  // namespace posenc::detail::scalar

namespace posenc::detail {

namespace {

// Double-double arithmetic (Dekker, no FMA): values hi + lo with |lo| <= ulp(hi) / 2.
struct DD {
  double hi = 0.0, lo = 0.0;
};

DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

DD two_prod(double a, double b) {
  double ah, al, bh, bl;
  split(a, ah, al);
  split(b, bh, bl);
  const double p = a * b;
  return {p, (((ah * bh - p) + ah * bl) + al * bh) + al * bl};
}

DD add(DD a, DD b) {
  const DD s = two_sum(a.hi, b.hi);
  return two_sum(s.hi, s.lo + a.lo + b.lo);
}

DD mul(DD a, DD b) {
  const DD p = two_prod(a.hi, b.hi);
  return two_sum(p.hi, p.lo + a.hi * b.lo + a.lo * b.hi);
}

DD div_small(DD a, double k) {  // a / k, k a small integer
  const double q = a.hi / k;
  const DD p = two_prod(q, k);
  return two_sum(q, (((a.hi - p.hi) - p.lo) + a.lo) / k);
}

DD operator-(DD a) {
  return {-a.hi, -a.lo};
}

// The float32 nearest to hi + lo.
float round_dd(DD v) {
  const float f = static_cast<float>(v.hi);
  const double d = (v.hi - static_cast<double>(f)) + v.lo;  // v - f (the first difference exact)
  if (d == 0.0) return f;
  const float g = std::nextafter(f, d > 0 ? 2.0f : -2.0f);
  const double mid = (static_cast<double>(f) + static_cast<double>(g)) / 2;  // exact
  const double beyond = (v.hi - mid) + v.lo;                                 // v - mid
  return (d > 0 ? beyond > 0 : beyond < 0) ? g : f;
}

}  // namespace

namespace {

// sin(p w) (cosine = false) or cos(p w) as a double-double: the hard-case path of rounded_exact
// and exact_side (see kernel_math.hpp, step 4, for its error bound); not inlined: one copy
// serves both (module size).
[[gnu::noinline]] DD exact_value(double p, double w, double wlo, bool cosine) {
  double ph, pl, wh, wl, xh, xl, rh, rl;
  split(p, ph, pl);
  split(w, wh, wl);
  two_product(p, ph, pl, w, wh, wl, wlo, xh, xl);
  if (xh == 0.0) return {cosine ? 1.0 : 0.0, 0.0};
  const double k = reduce_pio2(xh, xl, rh, rl);
  // sin and cos of r = rh + rl (|r| <= pi/4 + 2^-30) by their Taylor series in double-double:
  // term n is r^n / n!, added to the cosine (n even) or the sine (n odd) with sign (-1)^(n/2),
  // to n = 29: truncation below 2^-110, rounding about 2^-100 relative.
  const DD r{rh, rl};
  DD s = r, c{1.0, 0.0}, term = r;
#if defined(__clang__)
#pragma clang loop unroll(disable)  // a rare path: keep it small
#endif
  for (int n = 2; n <= 29; ++n) {
    term = div_small(mul(term, r), static_cast<double>(n));
    const DD signed_term = (n / 2) % 2 != 0 ? -term : term;
    if (n % 2 == 0) {
      c = add(c, signed_term);
    } else {
      s = add(s, signed_term);
    }
  }
  DD sv, cv;
  apply_quadrant(static_cast<std::int64_t>(k), s, c, sv, cv);
  return cosine ? cv : sv;
}

}  // namespace

float rounded_exact(double p, double w, double wlo, bool cosine) noexcept {
  return round_dd(exact_value(p, w, wlo, cosine));
}

[[gnu::noinline]] int exact_side(double p, double w, double wlo, bool cosine, float f) noexcept {
  // The float64 kernel first (within kHardMargin of the exact value, step 3): it decides the side
  // unless f lies that close, which for a 16-bit midpoint f is about one case in 2^23; then the
  // double-double series (about 30 times slower).
  if (p * w > 0.0 && p * w <= kReduceLimit) {
    double ph, pl, wh, wl, s, c;
    split(p, ph, pl);
    split(w, wh, wl);
    sincos_f64(p, ph, pl, w, wh, wl, wlo, s, c);
    const double d = (cosine ? c : s) - static_cast<double>(f);
    if (d > kHardMargin) return 1;
    if (d < -kHardMargin) return -1;
  }
  // Beyond 2^31 radians (rows outside the float32 rounding contract) the series' reduction has no
  // error bound, and far beyond it its quadrant count overflows (found by fuzz_encode's 16-bit
  // check, min_timescale 1e70): the side of a tie, i.e. the 16-bit rounding of f itself.
  if (!(p * w <= kReduceLimit)) return 0;
  const DD v = exact_value(p, w, wlo, cosine);
  if (p * w == 0.0) {  // the exact values sin 0 = 0 and cos 0 = 1
    const double x = v.hi;
    return x > f ? 1 : x < f ? -1 : 0;
  }
  // Otherwise the exact value is transcendental (never equal to f): its side of f is certain when
  // the double-double lies further from f than its error bound, 2^-68 up to 2^31 radians.
  const double d = (v.hi - static_cast<double>(f)) + v.lo;
  if (d > 0x1p-68) return 1;
  if (d < -0x1p-68) return -1;
  return 2;
}

}  // namespace posenc::detail
