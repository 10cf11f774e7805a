// Internal: the scalar math shared by every kernel (portable and wasm SIMD): the exact angle
// p * w as a double-double, its reduction by pi/2, the float64 sine/cosine polynomials, the
// hard-case test of the correctly rounded float32 result, and the row layout.
//
// What is computed: for a position p and a frequency w (a float64, or the double-double w + wlo
// that carries a real frequency such as 10000^(-2i/d) to about 2^-100 relative), the float32
// nearest to sin(p w) and cos(p w), where p w is the exact real product (no float64 rounding of
// the angle: that rounding alone moves 0.45% of the floats at positions near 2^24; nor of the
// frequency: rounding 10000^(-2i/d) to a double moves 0.9% of them at positions near 2^24).
//
// 1. Exact angle: w = hi + lo (Dekker split, hi with 26 significant bits) and likewise p, so that
//    p w = xh + xl exactly (TwoProduct without FMA; wasm has none); p wlo is added to xl in float64
//    (the product and the sum each rounded: below 1.5 * 2^-75 at the largest angle, 2^31).
// 2. Reduction (Cody-Waite in double-double): k = nearest(xh * 2/pi) (|k| < 2^31 while
//    x <= kReduceLimit), pi/2 = C1 + C2 + C3 + C4 with C1..C3 of 22 significant bits (k * Ci
//    exact) and C4 of 53 (pi/2 - C1 - C2 - C3 - C4 < 2^-126). xh - k C1 is exact (Sterbenz), the
//    next two subtractions are TwoSums, the tails are added in float64: r = rh + rl with
//    |r - (x - k pi/2)| < 2^-73 for x <= 2^31 (2^-80 for x <= 2^24): the largest rounding is that
//    of xl - k C4, |xl| <= 2^-52 |xh|.
// 3. Polynomials on |rh| <= pi/4 + 2^-30: the fdlibm __kernel_sin/__kernel_cos coefficients (six
//    terms, truncation error below 2^-58), with rl folded in to first order (sin(rh + rl) =
//    sin rh + rl cos rh, |rl| <= 2^-53 |rh|). Error of (s, c): about one float64 ulp, at most
//    0.999 * 2^-53 measured against quad precision (test_kernels.cpp); the bounds in encode.cpp
//    take d = 2^-52. The direct rows use a cheaper reduction (reduce_pio2_lite): within 2^-51.
// 4. Rounding: a float64 value v within E of the exact value rounds to the correct float32
//    unless a float32 rounding boundary (a midpoint between floats) lies within E of v. The
//    test: fround(v - E) == fround(v + E) (both computed in float64 then rounded; a midpoint is a
//    float64, so the float64 roundings of v -+ E never cross one). With E = kHardMargin = 2^-49
//    this fails for about 1 value in 10^5 to 10^6 of a typical table (more below |v| ~ 2^-20 and
//    always below ~2^-26, where E is not small against the float32 spacing; and for every sine
//    at position 0). Those values are recomputed by rounded_exact() (kernel_scalar.cpp): the
//    same double-double angle and reduction, then the Taylor series of sin and cos in
//    double-double arithmetic (the same code in every build: no long double, which is software
//    quad under wasm and would add about 8 KB gzipped), rounded once to float32. It is exact to
//    within 2^-73 absolute (2^-80 below 2^24 radians; plus x times the real frequency's error,
//    about 2^-100 relative: 2^-69 at 2^31 radians) plus 2^-95 relative: a value is correctly
//    rounded unless the exact value lies that close to a float32 midpoint (no such case is known;
//    the tests count them).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "math/double_double.hpp"

namespace posenc::detail {

using math::kSplit;
using math::split;

inline constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
inline constexpr double kPio2C1 = 0x1.921fb80000000p+0;    // 22 bits
inline constexpr double kPio2C2 = -0x1.5dde980000000p-23;  // 22 bits
inline constexpr double kPio2C3 = 0x1.8469880000000p-48;   // 22 bits
inline constexpr double kPio2C4 = 0x1.8cc51701b839ap-72;   // 53 bits
inline constexpr double kNegPio2C2 = -kPio2C2, kNegPio2C3 = -kPio2C3;
// Largest |angle| the reduction accepts (|k| < 2^31 keeps k * Ci exact).
inline constexpr double kReduceLimit = 2147483648.0;
// 1.5 * 2^52: adding and subtracting it rounds a double below 2^51 to the nearest integer (ties to
// even, like f64x2.nearest).
inline constexpr double kRoundMagic = 6755399441055744.0;
// Error bound E of every float64 value a kernel rounds (see the analysis in encode.cpp: the
// largest is angle addition's, below 2^-50): fround(v - E) != fround(v + E) marks a hard case.
inline constexpr double kHardMargin = 0x1p-49;

inline constexpr double kS1 = -1.66666666666666324348e-01, kS2 = 8.33333333332248946124e-03,
                        kS3 = -1.98412698298579493134e-04, kS4 = 2.75573137070700676789e-06,
                        kS5 = -2.50507602534068634195e-08, kS6 = 1.58969099521155010221e-10;
inline constexpr double kC1 = 4.16666666666666019037e-02, kC2 = -1.38888888888741095749e-03,
                        kC3 = 2.48015872894767294178e-05, kC4 = -2.75573143513906633035e-07,
                        kC5 = 2.08757232129817482790e-09, kC6 = -1.13596475577881948265e-11;

// Where a row's sines and cosines go (Spec layout and odd-dim policy, resolved once).
struct RowLayout {
  std::int64_t sines = 0;    // sine columns = frequencies
  std::int64_t cosines = 0;  // cosine columns (sines or sines - 1)
  std::int64_t dim = 0;
  bool interleaved = true;
  bool zero_column = false;  // column dim - 1 is zero padding
};

// The frequencies of a spec as the kernels read them: padded to a multiple of 4 entries with
// copies of the last frequency (0 when there is none), so padding lanes compute values that are
// never written but behave like real ones. The kernels split each w for the exact products (three
// operations), except the direct rows, which load the halves wl stored by the encoder.
//
// A frequency that is a real number rather than a double (the paper's 10000^(-2i/d)) is carried as
// the double-double w[i] + lo[i] (|lo[i]| <= ulp(w[i]) / 2, about 2^-100 relative from the real
// value); lo holds zeros (the sinusoidal encoder's framework presets) or is nullptr (RoPE from a
// config.json, timm) when the frequencies are the doubles w[i] themselves: every result is then
// the same bits as without the tails.
//
// wl, when given (the sinusoidal encoder: with lo, which is then never nullptr), holds the Dekker
// low halves of w (split(w[i]): w[i] - wl[i] has 26 significant bits), so that the direct rows load
// them instead of splitting each frequency again: that pays for the p lo product.
struct SplitFrequencies {
  const double* w = nullptr;
  const double* lo = nullptr;
  const double* wl = nullptr;
  double low(std::int64_t i) const { return lo != nullptr ? lo[i] : 0.0; }
};

// x = p (w + wlo) = xh + xl: p w exactly (p = ph + pl and w = wh + wl split; no underflow for the
// angles posenc meets: |w| >= 2^-1000 or w = 0), plus p wlo in float64 (|p wlo| <= 2^-53 |xh|,
// rounded by at most 2^-106 |xh|, the sum by as much: 1.5 * 2^-75 at the largest angle, 2^31).
// |xl| <= 2^-52 |xh|.
inline void two_product(double p, double ph, double pl, double w, double wh, double wl, double wlo,
                        double& xh, double& xl) {
  xh = p * w;
  xl = ((((ph * wh - xh) + ph * wl) + pl * wh) + pl * wl) + p * wlo;
}

// x = xh + xl (0 <= xh <= kReduceLimit) = k pi/2 + rh + rl; returns k as a double holding an
// integer. See step 2 above.
inline double reduce_pio2(double xh, double xl, double& rh, double& rl) {
  const double k = (xh * kTwoOverPi + kRoundMagic) - kRoundMagic;
  const double a = xh - k * kPio2C1;
  const double b = k * kNegPio2C2;
  double s = a + b;  // TwoSum(a, b)
  double bb = s - a;
  double e = (a - (s - bb)) + (b - bb);
  const double c = k * kNegPio2C3;
  const double s2 = s + c;  // TwoSum(s, c)
  bb = s2 - s;
  e += (s - (s2 - bb)) + (c - bb);
  const double tail = e + (xl - k * kPio2C4);
  rh = s2 + tail;  // FastTwoSum (|s2| >= |tail|)
  rl = tail - (rh - s2);
  return k;
}

// Applies the quadrant q (k mod 4) to (sin r, cos r), giving (sin x, cos x).
template <class T>
inline void apply_quadrant(std::int64_t q, T sr, T cr, T& s, T& c) {
  switch (q & 3) {
    case 0:
      s = sr, c = cr;
      break;
    case 1:
      s = cr, c = -sr;
      break;
    case 2:
      s = -sr, c = -cr;
      break;
    default:
      s = -cr, c = sr;
      break;
  }
}

// sin and cos of r = rh + rl (|rh| <= pi/4 + 2^-30, |rl| <= 2^-52 |rh|) in float64, error
// below 2^-53 absolute. The SIMD kernels evaluate the same expressions in the same order.
inline void sincos_reduced_f64(double rh, double rl, double& s, double& c) {
  const double z = rh * rh;
  const double ps = kS1 + z * (kS2 + z * (kS3 + z * (kS4 + z * (kS5 + z * kS6))));
  const double pc = kC1 + z * (kC2 + z * (kC3 + z * (kC4 + z * (kC5 + z * kC6))));
  s = rh + (rh * z * ps + rl);
  c = 1.0 - (0.5 * z - (z * z * pc - rh * rl));
}

// The reduction of step 2 without the TwoSums, for the direct rows: each subtraction's result is
// below 1 in magnitude, so its rounding is below 2^-54; r is within 3 * 2^-54 + 2^-76 of
// x - k pi/2, and sin/cos of it (below) within 2^-51 of the exact values. Returns k.
inline double reduce_pio2_lite(double xh, double xl, double& r) {
  const double k = (xh * kTwoOverPi + kRoundMagic) - kRoundMagic;
  r = (((xh - k * kPio2C1) + k * kNegPio2C2) + k * kNegPio2C3) + (xl - k * kPio2C4);
  return k;
}

// sin and cos of r (|r| <= pi/4 + 2^-30) with the polynomials of step 3 (no low part).
inline void sincos_reduced_lite(double r, double& s, double& c) {
  const double z = r * r;
  const double ps = kS1 + z * (kS2 + z * (kS3 + z * (kS4 + z * (kS5 + z * kS6))));
  const double pc = kC1 + z * (kC2 + z * (kC3 + z * (kC4 + z * (kC5 + z * kC6))));
  s = r + r * z * ps;
  c = 1.0 - (0.5 * z - z * z * pc);
}

// sin and cos of the exact p w (0 <= p w <= kReduceLimit), float64 within 2^-53 absolute.
// ph, pl: split(p); wh, wl: split(w).
inline void sincos_f64(double p, double ph, double pl, double w, double wh, double wl, double wlo,
                       double& s, double& c) {
  double xh, xl, rh, rl, sr, cr;
  two_product(p, ph, pl, w, wh, wl, wlo, xh, xl);
  const double k = reduce_pio2(xh, xl, rh, rl);
  sincos_reduced_f64(rh, rl, sr, cr);
  apply_quadrant(static_cast<std::int64_t>(k), sr, cr, s, c);
}

// The same within 2^-51 (reduce_pio2_lite): the direct rows.
inline void sincos_f64_lite(double p, double ph, double pl, double w, double wh, double wl,
                            double wlo, double& s, double& c) {
  double xh, xl, r, sr, cr;
  two_product(p, ph, pl, w, wh, wl, wlo, xh, xl);
  const double k = reduce_pio2_lite(xh, xl, r);
  sincos_reduced_lite(r, sr, cr);
  apply_quadrant(static_cast<std::int64_t>(k), sr, cr, s, c);
}

inline std::uint32_t float_bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// The float32 rounding of v, a float64 within kHardMargin of the exact value; sets hard when
// that does not decide the rounding (see step 4 above).
inline float round_checked(double v, bool& hard) {
  const float lo = static_cast<float>(v - kHardMargin);
  const float hi = static_cast<float>(v + kHardMargin);
  hard = float_bits(lo) != float_bits(hi);
  return lo;
}

// The float32 nearest to sin(p w) (cosine = false) or cos(p w), p w the exact product with the
// frequency w + wlo (two_product), 0 <= p w <= kReduceLimit: the hard-case path of step 4 (not
// inlined, it is rare).
float rounded_exact(double p, double w, double wlo, bool cosine) noexcept;
// The sign of sin(p w) - f (cosine = false) or cos(p w) - f: -1, 0 (only at p w = 0) or +1, or 2
// when the double-double value lies within its error bound of f (posenc/half.hpp: the side of a
// float16 / bf16 midpoint). Beyond kReduceLimit (outside the float32 contract, where the series has
// no bound) 0: the midpoint goes to even, the 16-bit rounding of f. Not inlined: rare.
int exact_side(double p, double w, double wlo, bool cosine, float f) noexcept;

// The hard-case path for frequency j of F (not inlined: the kernels' loops then read F only in
// the rare hard case, not per value).
[[gnu::noinline]] inline float rounded_exact_at(double p, const SplitFrequencies& F, std::int64_t j,
                                                bool cosine) noexcept {
  return rounded_exact(p, F.w[j], F.low(j), cosine);
}

// v (a float64 value of sin or cos(p w_j) within kHardMargin of it, w_j frequency j of F) rounded
// to the nearest float32: round_checked, and the hard cases through rounded_exact.
inline float rounded_at(double v, double p, const SplitFrequencies& F, std::int64_t j,
                        bool cosine) {
  bool hard;
  const float f = round_checked(v, hard);
  return hard ? rounded_exact_at(p, F, j, cosine) : f;
}

// out = v (Add = false) or out = out * scale + v (Add = true).
template <bool Add>
inline void put(float* out, float v, float scale) {
  if constexpr (Add) {
    *out = *out * scale + v;
  } else {
    *out = v;
  }
}

// Writes frequencies [i0, min(i0 + 4, sines)) from s[k], c[k] (k = i - i0) into a row: the sine
// always, the cosine when i < cosines. The scalar tail of every vector kernel; not inlined, as it
// runs once per row and would otherwise be copied into every kernel (module size).
template <bool Add>
[[gnu::noinline]] inline void put_tail(const RowLayout& L, std::int64_t i0, const float* s,
                                       const float* c, float scale, float* out) {
  const std::int64_t end = i0 + 4 < L.sines ? i0 + 4 : L.sines;
  for (std::int64_t i = i0; i < end; ++i) {
    const bool has_cos = i < L.cosines;
    if (L.interleaved) {
      put<Add>(out + 2 * i, s[i - i0], scale);
      if (has_cos) put<Add>(out + 2 * i + 1, c[i - i0], scale);
    } else {
      put<Add>(out + i, s[i - i0], scale);
      if (has_cos) put<Add>(out + L.sines + i, c[i - i0], scale);
    }
  }
  if (L.zero_column) put<Add>(out + L.dim - 1, 0.0f, scale);
}

}  // namespace posenc::detail
