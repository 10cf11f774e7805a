// Table-free exp, log, log10 and pow (exact_math.hpp).
#include "math/exact_math.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace posenc::math {

namespace {

// ln 2, 1/ln 10, 1/6, 1/24, 1/120 as double-doubles (error below 2^-108 relative).
constexpr DD kLn2 = {0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56};
constexpr DD kInvLn10 = {0x1.bcb7b1526e50ep-2, 0x1.95355baaafad3p-57};
constexpr DD kInv6 = {0x1.5555555555555p-3, 0x1.5555555555555p-57};
constexpr DD kInv24 = {0x1.5555555555555p-5, 0x1.5555555555555p-59};
constexpr DD kInv120 = {0x1.1111111111111p-7, 0x1.1111111111111p-63};

// Largest and smallest arguments of exp with a finite, nonzero float64 result.
constexpr double kExpOverflow = 709.782712893384;
constexpr double kExpUnderflow = -745.1332191019412;

// expm1(r) for a double-double |r| <= 0.35: relative error below about 2^-102.
// t = r / 256 (|t| < 2^-9.5): expm1(t) = t + t^2/2 + ... + t^10/10! (the first omitted term is
// below 2^-117); the terms from t^6 on are below 2^-66 and summed in float64. Then
// 1 + expm1(2t) = (1 + expm1(t))^2, i.e. s <- 2s + s^2, eight times (keeping s, not 1 + s, keeps
// the relative accuracy when r is small).
DD expm1_reduced(DD r) {
  const DD t = {r.hi * 0x1p-8, r.lo * 0x1p-8};  // exact (|r.lo| >= 2^-1000 or 0)
  const double th = t.hi;
  const double tail =
      1.0 / 720 +
      th * (1.0 / 5040 + th * (1.0 / 40320 + th * (1.0 / 362880 + th * (1.0 / 3628800))));
  DD p = add(kInv120, mul_d(t, tail));
  p = add(kInv24, mul(t, p));
  p = add(kInv6, mul(t, p));
  p = add(DD{0.5, 0.0}, mul(t, p));
  p = add(DD{1.0, 0.0}, mul(t, p));
  DD s = mul(t, p);
  for (int i = 0; i < 8; ++i)
    s = add(DD{2 * s.hi, 2 * s.lo}, mul(s, s));
  return s;
}

// A float64 within 2^-51 relative of ln m, for sqrt(1/2) <= m < sqrt(2): ln m = 2 atanh(u),
// u = (m - 1) / (m + 1), |u| <= 0.1716; the series 2u (1 + u^2/3 + ... + u^20/21) (the first
// omitted term is below 2^-60 relative).
double log_seed(double m) {
  const double u = (m - 1.0) / (m + 1.0);
  const double z = u * u;
  const double series =
      1.0 / 3 +
      z * (1.0 / 5 +
           z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 +
                                              z * (1.0 / 13 +
                                                   z * (1.0 / 15 +
                                                        z * (1.0 / 17 +
                                                             z * (1.0 / 19 + z * (1.0 / 21)))))))));
  return 2.0 * u + 2.0 * u * (z * series);
}

}  // namespace

DD exp_dd(DD a) {
  const double k = std::nearbyint(a.hi / kLn2.hi);
  const DD r = add(a, mul_d(kLn2, -k));  // accurate add: exact up to 2^-106 |r|
  const DD e = add(DD{1.0, 0.0}, expm1_reduced(r));
  return scale(e, static_cast<int>(k));
}

DD log_dd(double x) {
  int e = 0;
  double m = std::frexp(x, &e);    // x = m 2^e, 1/2 <= m < 1
  if (m < 0x1.6a09e667f3bcdp-1) {  // sqrt(1/2)
    m *= 2.0;
    --e;
  }
  // y0 + t with t = m e^-y0 - 1 = (m - 1) + m expm1(-y0) (m - 1 is exact: Sterbenz).
  const double y0 = log_seed(m);
  const DD t = add(DD{m - 1.0, 0.0}, mul_d(expm1_reduced(DD{-y0, 0.0}), m));
  const DD y = add(DD{y0, 0.0}, t);
  return e == 0 ? y : add(mul_d(kLn2, static_cast<double>(e)), y);
}

double exp(double x) {
  if (std::isnan(x)) return x;
  if (x > kExpOverflow) return HUGE_VAL;
  if (x < kExpUnderflow) return 0.0;
  if (x < -708.0) {  // result near or below 2^-1022: scale in two steps (no subnormal part)
    const DD e = exp_dd(add(DD{x, 0.0}, DD{64 * kLn2.hi, 64 * kLn2.lo}));
    return std::ldexp(e.hi, -64);
  }
  return exp_dd(DD{x, 0.0}).hi;
}

double log(double x) {
  if (std::isnan(x) || x < 0.0) return std::nan("");
  if (x == 0.0) return -HUGE_VAL;
  if (std::isinf(x)) return x;
  return log_dd(x).hi;
}

double log10(double x) {
  if (std::isnan(x) || x < 0.0) return std::nan("");
  if (x == 0.0) return -HUGE_VAL;
  if (std::isinf(x)) return x;
  return mul(log_dd(x), kInvLn10).hi;
}

double pow(double b, double e) {
  if (e == 0.0 || b == 1.0) return 1.0;
  if (!(b >= 0.0) || std::isinf(b) || !std::isfinite(e)) return std::nan("");
  if (b == 0.0) return e > 0.0 ? 0.0 : HUGE_VAL;
  const DD y = mul_d(log_dd(b), e);
  if (y.hi > kExpOverflow) return HUGE_VAL;
  if (y.hi < kExpUnderflow) return 0.0;
  if (y.hi < -708.0) {
    const DD e2 = exp_dd(add(y, DD{64 * kLn2.hi, 64 * kLn2.lo}));
    return std::ldexp(e2.hi, -64);
  }
  return exp_dd(y).hi;
}

}  // namespace posenc::math
