// Internal: the scalar math shared by every kernel (portable and wasm SIMD): range reduction of a
// float64 angle by pi/2, the sine/cosine polynomials on the reduced angle, and the row layout.
//
// Range reduction (Cody-Waite, three parts): for 0 <= x <= kReduceLimit = 2^31, k = nearest(x *
// 2/pi) < 2^31, and r = ((x - k*P1) - k*P2) - k*P3 with P1, P2 holding 22 significant bits of
// pi/2 each (k*P1 and k*P2 are exact products, x - k*P1 is exact by Sterbenz) and P3 the next 53.
// |r| <= pi/4 + 2^-30 and r is within ~2^-52 of x - k*pi/2: the reduction adds no error that
// matters at float32 precision.
//
// Polynomials on |r| <= pi/4: the fdlibm __kernel_sin/__kernel_cos coefficients. Six terms in
// float64 (error below 2^-52: the "exact" anchors); the first four in float32 (truncation
// error below 2^-31; rounding error about one float32 ulp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace posenc::detail {

inline constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
inline constexpr double kPio2Part1 = 0x1.921fb80000000p+0;    // 22 bits
inline constexpr double kPio2Part2 = -0x1.5dde980000000p-23;  // 22 bits
inline constexpr double kPio2Part3 = 0x1.8469898cc5170p-48;
// Largest |angle| the fast reduction accepts (k < 2^31 keeps k*P1 and k*P2 exact).
inline constexpr double kReduceLimit = 2147483648.0;
// 1.5 * 2^52: adding and subtracting it rounds a double below 2^51 to the nearest integer.
inline constexpr double kRoundMagic = 6755399441055744.0;

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

// x = k * pi/2 + r; returns r and sets k (as a double holding an integer).
inline double reduce_pio2(double x, double& k) {
  k = (x * kTwoOverPi + kRoundMagic) - kRoundMagic;
  return ((x - k * kPio2Part1) - k * kPio2Part2) - k * kPio2Part3;
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

// sin and cos of a reduced angle r (|r| <= pi/4 + 2^-30) in float64, error below 2^-52.
inline void sincos_reduced_f64(double r, double& s, double& c) {
  const double z = r * r;
  s = r + r * z * (kS1 + z * (kS2 + z * (kS3 + z * (kS4 + z * (kS5 + z * kS6)))));
  c = 1.0 - (0.5 * z - z * z * (kC1 + z * (kC2 + z * (kC3 + z * (kC4 + z * (kC5 + z * kC6))))));
}

// The float32 next to x on the side of zero (x finite and not zero): the magnitude bits minus one.
inline float toward_zero(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  --bits;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// Whether S^2 + C^2 > 1 exactly. With M = max(|S|, |C|) and m = min(|S|, |C|): M^2 and m^2 are
// exact in float64 (24-bit significands), and so is 1 - M^2 when M^2 >= 1/2 (Sterbenz); when
// M^2 < 1/2 the sum is below 1 and 1 - M^2 > 1/2 > m^2 whatever the rounding.
inline bool above_unit(float S, float C) {
  const float as = S < 0 ? -S : S, ac = C < 0 ? -C : C;
  const double M = as < ac ? ac : as, m = as < ac ? as : ac;
  return m * m > 1.0 - M * M;
}

// (s, c) = a float64 sine and cosine of one angle, rounded to float32 so that S^2 + C^2 <= 1:
// the angle-addition kernels then never leave [-1, 1] (below) and need no clamp. When the
// nearest values have S^2 + C^2 > 1, the component rounded away from zero (the larger one if
// both or neither were) steps one float32 toward zero: its error grows from half an ulp to less
// than one ulp. A second step, of the other component, is needed only when both roundings were
// within about 2^-48 of a tie; both errors are then back near half an ulp. (Nothing is decided by
// the tie-break |S| == |C|: such a pair of nearest values always has S^2 + C^2 < 1.)
//
// Why that suffices: for float32 pairs (sa, ca), (sb, cb) of norm <= 1, the exact
// sa cb + ca sb and ca cb - sa sb lie in [-1, 1] and so do |sa cb| + |ca sb| (Cauchy-Schwarz).
// Each float32 product is within 2^-24 (relative) of the exact one, so the float32 sum or
// difference before its own rounding is at most 1 + 2^-24, which rounds to 1 (a tie, to even).
inline void unit_pair(double s, double c, float& S, float& C) {
  S = static_cast<float>(s);
  C = static_cast<float>(c);
  const bool away_s = std::fabs(static_cast<double>(S)) > std::fabs(s);
  const bool away_c = std::fabs(static_cast<double>(C)) > std::fabs(c);
  const bool first_s = away_s != away_c ? away_s : std::fabs(S) >= std::fabs(C);
  if (above_unit(S, C)) {
    if (first_s) {
      S = toward_zero(S);
    } else {
      C = toward_zero(C);
    }
  }
  if (above_unit(S, C)) {
    if (first_s) {
      C = toward_zero(C);
    } else {
      S = toward_zero(S);
    }
  }
}

// sin and cos of x (0 <= x <= kReduceLimit): float64 reduction, float32 polynomial. Error below
// 3 * 2^-25 absolute (r rounded to float32: 2^-25; polynomial rounding: about 2^-24).
inline void sincos_f32(double x, float& s, float& c) {
  double k;
  const float r = static_cast<float>(reduce_pio2(x, k));
  const float z = r * r;
  const float sr = r + r * z *
                           (static_cast<float>(kS1) +
                            z * (static_cast<float>(kS2) +
                                 z * (static_cast<float>(kS3) + z * static_cast<float>(kS4))));
  const float cr =
      1.0f - (0.5f * z - z * z *
                             (static_cast<float>(kC1) +
                              z * (static_cast<float>(kC2) +
                                   z * (static_cast<float>(kC3) + z * static_cast<float>(kC4)))));
  apply_quadrant(static_cast<std::int64_t>(k), sr, cr, s, c);
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
