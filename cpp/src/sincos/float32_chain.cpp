// Correctly rounded float32 pow (float32_chain.hpp): the correctly rounded float64 pow of
// math/exact_math.hpp, and its double-double logarithms for the rare results near a float32
// midpoint.
#include "sincos/float32_chain.hpp"

#include <cmath>
#include <cstdint>

#include "math/exact_math.hpp"

namespace posenc::detail {

namespace {

using math::add;
using math::DD;
using math::log_dd;
using math::two_prod;

bool is_integer(double v) {
  return std::nearbyint(v) == v;
}

}  // namespace

bool pow_exceeds(double b, double e, double m, bool* tie) {
  const DD lhs = math::mul_d(log_dd(b), e);
  const DD rhs = log_dd(m);
  const DD d = add(lhs, DD{-rhs.hi, -rhs.lo});
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
  const double d = math::pow(b, e);
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
