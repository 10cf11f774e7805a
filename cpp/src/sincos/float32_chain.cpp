// Correctly rounded float32 pow (float32_chain.hpp), with a small double-double exp and log for
// the rare results near a float32 midpoint. The double-double algorithms are the classic ones
// (Dekker's split and product, Knuth's two-sum; exp by argument reduction, a Taylor series and
// squaring as in Bailey's QD library; log by one Newton step on exp).
#include "sincos/float32_chain.hpp"

#include <cmath>
#include <cstdint>

namespace posenc::detail {

namespace {

struct DD {
  double hi, lo;
};

DD quick_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

void split(double a, double& hi, double& lo) {
  const double t = 134217729.0 * a;  // 2^27 + 1
  hi = t - (t - a);
  lo = a - hi;
}

DD two_prod(double a, double b) {
  const double p = a * b;
  double ah, al, bh, bl;
  split(a, ah, al);
  split(b, bh, bl);
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}

DD add(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  const DD t = two_sum(a.lo, b.lo);
  s.lo += t.hi;
  s = quick_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return quick_two_sum(s.hi, s.lo);
}

DD mul(DD a, DD b) {
  DD p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return quick_two_sum(p.hi, p.lo);
}

DD mul_d(DD a, double b) {
  DD p = two_prod(a.hi, b);
  p.lo += a.lo * b;
  return quick_two_sum(p.hi, p.lo);
}

DD div_d(DD a, double b) {
  const double q1 = a.hi / b;
  const DD p = two_prod(q1, b);
  const double q2 = (((a.hi - p.hi) - p.lo) + a.lo) / b;
  return quick_two_sum(q1, q2);
}

DD scale(DD a, int e) {
  return {std::ldexp(a.hi, e), std::ldexp(a.lo, e)};
}

constexpr DD kLn2 = {0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56};

// exp(a) for |a.hi| < 700: a = k ln2 + r, exp(r / 1024) by 11 Taylor terms (|r / 1024| < 3.4e-4:
// the next term is below 2^-130), then 10 squarings of (1 + s) kept as s = 2s + s^2.
DD exp_dd(DD a) {
  const double k = std::nearbyint(a.hi / kLn2.hi);
  DD r = add(a, mul_d(kLn2, -k));
  r = scale(r, -10);
  DD s = r, term = r;
  for (int i = 2; i <= 11; ++i) {
    term = div_d(mul(term, r), static_cast<double>(i));
    s = add(s, term);
  }
  for (int i = 0; i < 10; ++i)
    s = add(scale(s, 1), mul(s, s));
  s = add(s, DD{1.0, 0.0});
  return scale(s, static_cast<int>(k));
}

// ln(x) for x > 0 finite: one Newton step y + x exp(-y) - 1 from the double log (quadratic
// convergence: 2^-52 -> ~2^-104).
DD log_dd(double x) {
  const double y0 = std::log(x);
  DD t = mul_d(exp_dd(DD{-y0, 0.0}), x);
  t = add(t, DD{-1.0, 0.0});
  return add(DD{y0, 0.0}, t);
}

bool is_integer(double v) {
  return std::nearbyint(v) == v;
}

}  // namespace

bool pow_exceeds(double b, double e, double m, bool* tie) {
  const DD lhs = mul_d(log_dd(b), e);
  const DD d = add(lhs, DD{-log_dd(m).hi, -log_dd(m).lo});
  const double size = std::fmax(std::fabs(lhs.hi), 1.0);
  *tie = std::fabs(d.hi) < std::ldexp(size, -90);
  return d.hi > 0;
}

float pow_f32(float base, double exponent) {
  const double b = base, e = exponent;
  if (e == 0.0 || b == 1.0) return 1.0f;
  if (e == 1.0) return base;
  if (e == 2.0) return static_cast<float>(b * b);  // exact product, one rounding
  if (e == 0.5) return static_cast<float>(std::sqrt(b));
  const double d = std::pow(b, e);
  const float f = static_cast<float>(d);
  if (!std::isfinite(d) || d == 0.0 || !std::isfinite(f) || std::fabs(d) < 0x1p-126) return f;
  if (static_cast<double>(f) == d) return f;  // within 2^-52 of a float: far from any midpoint
  const float lo = static_cast<double>(f) < d ? f : std::nextafter(f, 0.0f);
  const float hi = static_cast<double>(f) < d ? std::nextafter(f, 2.0f * f) : f;
  const double mid = 0.5 * (static_cast<double>(lo) + static_cast<double>(hi));  // exact
  if (std::fabs(d - mid) > std::ldexp(d, -44)) return f;
  // Near a midpoint. Integer exponents up to 3 (b^3 of a float is exact in double-double, but not
  // in double): compare exactly.
  if (is_integer(e) && e == 3.0) {
    const DD sq = two_prod(b, b);                                 // exact
    const DD cube = add(two_prod(sq.hi, b), two_prod(sq.lo, b));  // exact to 2^-106
    const DD diff = add(cube, DD{-mid, 0.0});
    if (diff.hi == 0.0) {
      std::uint32_t bits;
      static_assert(sizeof bits == sizeof lo);
      __builtin_memcpy(&bits, &lo, sizeof bits);
      return (bits & 1u) == 0 ? lo : hi;
    }
    return diff.hi > 0 ? hi : lo;
  }
  bool tie = false;
  const bool above = pow_exceeds(b, e, mid, &tie);
  if (tie) {
    std::uint32_t bits;
    __builtin_memcpy(&bits, &lo, sizeof bits);
    return (bits & 1u) == 0 ? lo : hi;  // ties to even
  }
  return above ? hi : lo;
}

}  // namespace posenc::detail
